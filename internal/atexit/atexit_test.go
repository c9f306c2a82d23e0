package atexit

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// TestRun: each hook runs once, whether from its own function or from Run,
// the others newest first; Run waits for a hook that is running.
func TestRun(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	add := func(s string) func() {
		return func() { mu.Lock(); ran = append(ran, s); mu.Unlock() }
	}
	first := Register(add("first"))
	Register(add("second"))
	third := Register(add("third"))
	third()
	Run()
	first()
	third()
	if want := []string{"third", "second", "first"}; !slices.Equal(ran, want) {
		t.Errorf("ran %q, want %q", ran, want)
	}

	started, release := make(chan struct{}), make(chan struct{})
	slow := Register(func() { close(started); <-release; add("slow")() })
	go slow()
	<-started
	done := make(chan struct{})
	go func() { Run(); close(done) }()
	select {
	case <-done:
		t.Fatal("Run returned while a hook was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-done
	if ran[len(ran)-1] != "slow" {
		t.Errorf("ran %q, want slow last", ran)
	}
}
