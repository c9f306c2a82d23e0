//go:build linux

package lab

import (
	"fmt"

	"github.com/vishvananda/netns"
)

// NftablesSize (tests only) counts the rules of the DUT's forward chain and
// the addresses of its FWSet set.
func NftablesSize(st *State) (rules, elems int, err error) {
	h, err := netns.GetFromName(st.DUTNamespace)
	if err != nil {
		return 0, 0, fmt.Errorf("open DUT namespace: %w", err)
	}
	defer h.Close()
	return nftSize(h)
}
