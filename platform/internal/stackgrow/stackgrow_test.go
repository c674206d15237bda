package stackgrow

import "testing"

// deep uses about 300 bytes of stack per level, like a long call chain of
// ordinary functions.
//
//go:noinline
func deep(n int) byte {
	var pad [256]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%len(pad)]
}

// BenchmarkRequestGoroutine runs a call chain about 45 KiB deep in a new
// goroutine, as a request is served, with and without growing the stack
// first. Grow pays when "grow" is faster than "no-grow".
func BenchmarkRequestGoroutine(b *testing.B) {
	for _, tc := range []struct {
		name string
		grow bool
	}{{"no-grow", false}, {"grow", true}} {
		b.Run(tc.name, func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				go func() {
					if tc.grow {
						Grow()
					}
					done <- deep(150)
				}()
				<-done
			}
		})
	}
}
