// Package atexit keeps what must not outlive the process even when a second
// Ctrl-C ends it at once (a temporary lab, half-written files): each hook
// runs at most once, from its own cleanup or from Run, and one that is
// running is waited for. Register has the shape fileio.WriteFiles and
// rig.Config.AtExit take.
package atexit

import "sync"

var hooks struct {
	sync.Mutex
	list []*hook
}

type hook struct {
	once sync.Once
	fn   func()
}

// Register registers fn and returns the function that runs it (at most
// once).
func Register(fn func()) func() {
	h := &hook{fn: fn}
	hooks.Lock()
	hooks.list = append(hooks.list, h)
	hooks.Unlock()
	return func() { h.once.Do(h.fn) }
}

// Run runs every registered hook that has not run yet, newest first, and
// waits for one already running.
func Run() {
	hooks.Lock()
	list := append([]*hook(nil), hooks.list...)
	hooks.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		list[i].once.Do(list[i].fn)
	}
}
