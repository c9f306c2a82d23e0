//go:build !linux

package trials

// PauseWarnings is empty where the raw engine is not supported.
func (e *Engine) PauseWarnings() []string { return nil }

// ReadPause is not supported on this system.
func ReadPause(ns, ifname string) (PauseParam, error) { return PauseParam{}, errNotSupported }
