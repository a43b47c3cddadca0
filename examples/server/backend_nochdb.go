//go:build !chdb

package main

const chdbHint = " (chdb: build with -tags chdb)"
