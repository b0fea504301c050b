//go:build !linux && !darwin

package main

// takeForeground is a no-op where terminal job control is not Unix's.
func takeForeground(string) (release func()) { return func() {} }
