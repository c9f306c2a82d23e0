package nsutil

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn with the calling goroutine's OS thread inside the network
// namespace name (as created by `ip netns add` or package lab, i.e. bound
// under /run/netns). An empty name runs fn in the current namespace. The
// thread is returned to its original namespace afterwards; if that fails the
// thread stays locked and is discarded by the runtime when the goroutine ends.
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	done := make(chan error, 1)
	// A fresh goroutine: if restoring the namespace fails we exit it while
	// still locked, so the runtime kills the thread instead of reusing it.
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("get current network namespace: %w", err)
			return
		}
		defer orig.Close()
		target, err := netns.GetFromName(name)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open network namespace %q: %w", name, err)
			return
		}
		defer target.Close()
		if err := netns.Set(target); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter network namespace %q: %w", name, err)
			return
		}
		ferr := fn()
		if err := netns.Set(orig); err != nil {
			// Leave the thread locked: it dies with this goroutine.
			done <- fmt.Errorf("return from network namespace %q: %w", name, err)
			return
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}
