// SPDX-License-Identifier: MIT
//
// wl-go: a Go program with a known call structure, for the tests of Go's
// pclntab names and Go stacks (tests/bats/go.bats):
//
//	spin phase, SPIN seconds, on two goroutines at once:
//	  runtime.goexit -> runtime.main -> main.main -> main.run -> main.work
//	  runtime.goexit -> main.run.func1 -> main.spinner -> main.work
//	  where main.work -> main.hotA (2/3 of its time) and main.hotB (1/3);
//	  main.run.func1 is the closure the go statement starts
//	churn phase, CHURN seconds:
//	  ... main.main -> main.run -> main.churn, allocating a linked heap
//	  whose live part keeps the garbage collector marking: runtime work
//	  under runtime.systemstack (assists, background mark workers)
//
// Every function named above is //go:noinline, so the chains in the samples
// are the chains in the source.  Durations are measured by WL_CLOCK (the
// process's CPU time with WL_CLOCK=cpu); it is ready (WL_READY) before its
// designed work and waits for WL_GO first, as the C workloads do
// (tests/workloads/wl.h).
//
// usage: wl-go [SPIN [CHURN]]	(seconds, default 2 and 1); prints nothing
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

var sink uint64

var cpuClock = len(os.Getenv("WL_CLOCK")) > 0 && os.Getenv("WL_CLOCK")[0] == 'c'

// now returns seconds of the monotonic clock, or of the process's CPU time.
func now() float64 {
	if cpuClock {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			fmt.Fprintln(os.Stderr, "wl-go: getrusage:", err)
			os.Exit(70)
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
	return float64(time.Now().UnixNano()) / 1e9
}

//go:noinline
func hotA(n int, salt uint64) uint64 {
	x := sink + salt
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + salt
	}
	return x
}

//go:noinline
func hotB(n int, salt uint64) uint64 {
	x := sink ^ salt
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	return x
}

//go:noinline
func work(deadline float64, salt uint64) uint64 {
	var x uint64
	for now() < deadline {
		x += hotA(200000, salt)
		x += hotB(100000, salt)
	}
	return x
}

//go:noinline
func spinner(deadline float64, started, done *sync.WaitGroup, out *uint64) {
	started.Done()
	*out = work(deadline, 7)
	done.Done()
}

type node struct {
	next *node
	data [6]uint64
}

//go:noinline
func churn(deadline float64) uint64 {
	live := make([]*node, 1<<16)
	var x uint64
	for i := 0; now() < deadline; i++ {
		for j := 0; j < 4096; j++ {
			k := (i*4096 + j) & (len(live) - 1)
			n := &node{next: live[(k*7)&(len(live)-1)]}
			n.data[0] = uint64(k)
			live[k] = n
		}
		x += live[i&(len(live)-1)].data[0]
	}
	return x
}

//go:noinline
func run(spin, churnFor float64) {
	var started, done sync.WaitGroup
	var other uint64

	waitGo()
	deadline := now() + spin
	started.Add(1)
	done.Add(1)
	go spinner(deadline, &started, &done, &other)
	started.Wait()
	x := work(deadline, 3)
	done.Wait()
	x += churn(now() + churnFor)
	sink = x + other
}

func ready() {
	if p := os.Getenv("WL_READY"); p != "" {
		f, err := os.Create(p)
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "wl-go:", err)
			os.Exit(70)
		}
	}
}

// waitGo waits at most 10 minutes for the file WL_GO names.
func waitGo() {
	p := os.Getenv("WL_GO")
	if p == "" {
		return
	}
	for n := 0; ; n++ {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if n == 600000 {
			fmt.Fprintln(os.Stderr, p+": not released in 10 minutes")
			os.Exit(75)
		}
		time.Sleep(time.Millisecond)
	}
}

func arg(i int, def float64) float64 {
	if len(os.Args) <= i {
		return def
	}
	v, err := strconv.ParseFloat(os.Args[i], 64)
	if err != nil || !(v >= 0 && v <= 86400) {
		fmt.Fprintf(os.Stderr, "%s: invalid argument '%s': must be 0..86400\n",
			os.Args[0], os.Args[i])
		os.Exit(64)
	}
	return v
}

func main() {
	spin, churnFor := arg(1, 2), arg(2, 1)
	ready()
	run(spin, churnFor)
}
