#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# mkstream.pl: an unwound stream (lib/format/records.h, lib/format/unwound.h), byte by byte,
# from a line-based description on stdin; the bats tests of sp-symbolize use it.
# build an unwound stream from a line-based description on stdin
use strict; use warnings; no warnings "portable";
binmode STDOUT;
my %end = (complete => 0, root => 0, truncated => 1, noinfo => 2, error => 3, depth => 4, noregs => 5);
sub rec { my ($type, $body) = @_; my $n = 8 + length($body); my $pad = (8 - $n % 8) % 8;
	return pack('LL', $type, $n + $pad) . $body . ("\0" x $pad); }
sub hx { my $s = shift; return $s =~ /^0x/ ? hex($s) : $s; }
my $out = '';
while (my $l = <STDIN>) {
	chomp $l; next if $l =~ /^\s*(#|$)/;
	my @f = split ' ', $l;
	my $k = shift @f;
	if ($k eq 'header') {	# EVENT freq|period VALUE [VERSION]
		my ($ev, $mode, $val, $ver) = @f;
		$out .= pack('a8LL', "SPUNWND\0", $ver // 2, 88) .
			pack('LLQQLLQa32', 1, ($mode eq 'freq' ? 1 : 0) | 2, 0, $val, 1, 1, 0, $ev);
	}
	elsif ($k eq 'comm') { my ($pid, $tid, $name, $exec) = @f;	# PID TID NAME [exec]
		$out .= rec(3, pack('QLLLLa16', 1, $pid, $tid, $exec ? 2 : 0, 0, $name)); }
	elsif ($k eq 'mmap') { my ($pid, $start, $len, $pgoff, $prot, $path, $bid) = @f;	# [BUILD-ID-HEX]
		my $fn = $path . "\0"; $fn .= "\0" x ((8 - length($fn) % 8) % 8);
		my $b = defined $bid ? pack('H*', $bid) : '';
		$out .= rec(2, pack('QLLQQQLLQQLLLCa3a24', 1, $pid, $pid, hx($start), hx($len), hx($pgoff),
			0, 0, 0, 0, $prot, 2, 0, length($b), '', $b) . $fn); }
	elsif ($k eq 'fork' || $k eq 'exit') { my ($pid, $ppid, $tid, $ptid, $time) = @f;	# [TIME]
		$out .= rec($k eq 'fork' ? 4 : 5, pack('QLLLLLL', $time // 2, $pid, $ppid, $tid, $ptid, 0, 0)); }
	elsif ($k eq 'samples') { my ($n, $pid, $id) = @f;	# N PID ID: N samples of one stack
		$out .= rec(1, pack('QLLLLQ', $_, $pid, $pid, 0, $id, 1000)) for 1 .. $n; }
	elsif ($k eq 'lost') { $out .= rec(6, pack('QQQ', 3, 0, $f[0])); }
	elsif ($k eq 'stack') {	# PID ID END KERNEL-IPS|- USER-IPS|- [FLAG-DIGITS]
		my ($pid, $id, $e, $k_, $u, $fl) = @f;
		my @k = $k_ eq '-' ? () : map { hx($_) } split /,/, $k_;
		my @u = $u eq '-' ? () : map { hx($_) } split /,/, $u;
		my @fl = defined $fl ? split(//, $fl) : (map { 0 } @u);
		my $fb = pack('C*', @fl); $fb .= "\0" x ((8 - length($fb) % 8) % 8);
		$out .= rec(9, pack('LLSSCa3', $pid, $id, scalar @k, scalar @u, $end{$e}, '') .
			pack('Q*', @k, @u) . $fb); }
	elsif ($k eq 'sample') { my ($time, $pid, $tid, $id, $w) = @f;
		$out .= rec(1, pack('QLLLLQ', $time, $pid, $tid, 0, $id, $w // 1000)); }
	elsif ($k eq 'summary') { $out .= rec(10, pack('Q14', $f[0], 0, $f[1] // 0, 1, 1, 0, 0, 0, (0) x 6)); }
	else { die "mkstream: unknown keyword $k\n"; }
}
print $out;
