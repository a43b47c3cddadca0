// Package cputime reads the CPU time of the process, which benchmarks
// report per operation (cpu-ns/op): on a machine shared with other work it
// is steadier than wall time, since time spent waiting for a core is not
// counted.
package cputime
