// Package wait is the module's one context-aware sleep.
package wait

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done; it returns ctx.Err() then, else nil.
// A d of zero or less returns at once (nil, unless ctx is already done).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
