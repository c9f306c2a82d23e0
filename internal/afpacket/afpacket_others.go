//go:build !linux

package afpacket
