#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# mkraw.pl: a raw stream (lib/format/raw.h, lib/format/records.h), byte by
# byte, from a line-based description on stdin, as mkstream.pl builds
# unwound streams: processes that fork, map a file, run, sample and exit,
# thousands of them when a block repeats.
#
#   header STACK-SIZE                   cpu-clock at 99 Hz, registers AX..R15
#   fork TIME PID PPID TID PTID         a FORK record (type 4)
#   exit TIME PID PPID TID PTID         an EXIT record (type 5)
#   comm TIME PID TID NAME [exec]       a COMM record (type 3)
#   mmap TIME PID START LEN PGOFF PATH  an executable mapping (type 2)
#   sample TIME PID TID IP SP [WORD,WORD...]
#                                       user registers (IP, SP; BP is SP)
#                                       and the stack words from SP up
#   summary SAMPLES THREADS PROCESSES   the SUMMARY record (type 10)
#   repeat N ... end                    the lines between, N times
#
# A field {EXPR} is a Perl expression, evaluated each time its line is
# written, with $i the iteration of the repeat block (0 outside one) and
# %ENV the environment; numbers may be 0x hex.
use strict; use warnings; no warnings 'portable';
binmode STDOUT;

my $REGS = 20;		# bits of 0xff0fff: AX..SS (0..11), R8..R15 (16..23)
my ($IDX_BP, $IDX_SP, $IDX_IP) = (6, 7, 8);
our $i = 0;

sub rec { my ($type, $body) = @_; my $n = 8 + length($body); my $pad = (8 - $n % 8) % 8;
	return pack('LL', $type, $n + $pad) . $body . ("\0" x $pad); }
sub num { my $s = shift; return $s =~ /^0x/i ? hex($s) : $s; }

# The fields of a line: words, and {EXPR} with spaces and braces inside.
sub split_fields {
	my ($l, @f) = (shift);
	my ($cur, $depth) = ('', 0);

	for my $c (split //, $l) {
		if ($depth == 0 && $c =~ /\s/) {
			push @f, $cur if length $cur;
			$cur = '';
			next;
		}
		$depth++ if $c eq '{';
		$depth-- if $c eq '}';
		die "mkraw: unbalanced braces in '$l'\n" if $depth < 0;
		$cur .= $c;
	}
	die "mkraw: unbalanced braces in '$l'\n" if $depth;
	push @f, $cur if length $cur;
	return @f;
}

# A line's fields, {EXPR} ones compiled once into closures.
sub compile {
	my @f = split_fields(shift);
	return [ map {
		my $f = $_;
		if ($f =~ /^\{(.*)\}$/) {
			my $code = eval "sub { no warnings 'portable'; $1 }"
				or die "mkraw: bad expression $f: $@";
			$code;
		} else {
			$f;
		}
	} @f ];
}

sub fields { return map { ref $_ ? $_->() : $_ } @{ $_[0] }; }

my $out = '';
sub emit {
	my ($k, @f) = fields(shift);
	if ($k eq 'header') {
		my $stack = num($f[0]);
		$out .= pack('a8LL', "SPRAW\0\0\0", 1, 120) .
			pack('LLQQLLQa32', 1, 1, 0, 99, 1, 2, 1, 'cpu-clock') .
			pack('QQLLQ', 0x3187, 0xff0fff, $stack, 0, 0);
	} elsif ($k eq 'fork' || $k eq 'exit') {
		my ($t, $pid, $ppid, $tid, $ptid) = map { num($_) } @f;
		$out .= rec($k eq 'fork' ? 4 : 5,
			pack('QLLLLLL', $t, $pid, $ppid, $tid, $ptid, 0, 0));
	} elsif ($k eq 'comm') {
		my ($t, $pid, $tid, $name, $exec) = @f;
		$out .= rec(3, pack('QLLLLa16', num($t), num($pid), num($tid),
			$exec ? 2 : 0, 0, $name));
	} elsif ($k eq 'mmap') {
		my ($t, $pid, $start, $len, $pgoff, $path) = @f;
		my $fn = $path . "\0"; $fn .= "\0" x ((8 - length($fn) % 8) % 8);
		$out .= rec(2, pack('QLLQQQLLQQLLLCa3a24', num($t), num($pid), num($pid),
			num($start), num($len), num($pgoff), 0, 0, 0, 0, 5, 2, 0, 0, '', '') . $fn);
	} elsif ($k eq 'sample') {
		my ($t, $pid, $tid, $ip, $sp, $words) = @f;
		my @w = defined $words ? map { num($_) } split /,/, $words : ();
		my @r = (0) x $REGS;
		@r[$IDX_IP, $IDX_SP, $IDX_BP] = (num($ip), num($sp), num($sp));
		$out .= rec(1, pack('QLLLSSQQSSL', num($t), num($pid), num($tid),
			0, 2, 2, 10101010, num($ip), $REGS, 0, 8 * @w) .
			pack('Q*', @r, @w));
	} elsif ($k eq 'summary') {
		my ($n, $threads, $procs) = map { num($_) } @f;
		$out .= rec(10, pack('Q9', $n, 0, 0, 0, $threads, $procs, 0, 0, 0));
	} else {
		die "mkraw: unknown keyword $k\n";
	}
	if (length($out) > 1 << 20) {
		print $out;
		$out = '';
	}
}

my @block;
my $repeat;
while (my $l = <STDIN>) {
	chomp $l;
	next if $l =~ /^\s*(#|$)/;
	if ($l =~ /^\s*repeat\s/) {
		die "mkraw: repeat inside repeat\n" if defined $repeat;
		(undef, $repeat) = fields(compile($l));
		$repeat = num($repeat);
		@block = ();
	} elsif ($l =~ /^\s*end\s*$/) {
		die "mkraw: end without repeat\n" unless defined $repeat;
		for ($i = 0; $i < $repeat; $i++) {
			emit($_) for @block;
		}
		$i = 0;
		undef $repeat;
	} elsif (defined $repeat) {
		push @block, compile($l);
	} else {
		emit(compile($l));
	}
}
die "mkraw: repeat without end\n" if defined $repeat;
print $out;
