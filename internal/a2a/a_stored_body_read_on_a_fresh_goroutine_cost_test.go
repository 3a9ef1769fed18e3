package a2a

import "testing"

// BenchmarkV10BodyOnAFreshGoroutine is BenchmarkV10BodyFromStoredBytes on
// a goroutine started for it, as a delivery lane renders: the growth of
// that goroutine's stack counts.
func BenchmarkV10BodyOnAFreshGoroutine(b *testing.B) {
	b.ReportAllocs()
	done := make(chan bool)
	for b.Loop() {
		go func() {
			_, ok := EncodeStoredV10(benchStored)
			done <- ok
		}()
		if !<-done {
			b.Fatal("not read")
		}
	}
}
