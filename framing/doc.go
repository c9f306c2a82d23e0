// Package framing owns everything about a test frame that needs neither a
// socket nor a clock: RFC 2544 frame-size arithmetic (line-rate frames per
// second, L1 and L2 bit rates, payload sizes for IPv4/UDP and IPv6/UDP with or
// without an 802.1Q tag), validation of frame sizes against protocol minimums,
// path MTU and the largest supported jumbo, frame templates built once with
// gopacket layers, and the test signature (encode in place, decode).
//
// Frame sizes follow RFC 1242: they run from the first octet of the destination
// MAC to the last octet of the FCS, so a "64-byte frame" is 60 bytes handed to
// an AF_PACKET socket plus the 4-byte FCS the NIC appends.
//
// # Sending
//
// Build one Template per flow (flows of a stream differ only in ports or
// addresses) with NewTemplate, check the size against the path with
// ValidateFrameSize, then per frame either WriteFrame into a ring slot or,
// for a buffer that already holds the template (CopyTo once), Stamp the
// Signature in place. Stamp writes 18 bytes and updates the UDP checksum from
// a precomputed partial sum, so its cost does not depend on the frame size,
// and it allocates nothing. A UDP-socket transport sends UDPPayloadSize bytes
// filled with FillPayload and EncodeSignature instead.
//
// # Receiving
//
// ParseFrame walks Ethernet, 802.1Q, IPv4 or IPv6 and UDP by offsets, checks
// lengths and returns the Signature and a FrameInfo; DecodeSignature reads a
// UDP payload from a socket. Both allocate nothing and return an error
// wrapping ErrNotTestFrame for anything that is not a test frame. The
// signature's layout is documented on Signature; its one-byte marker is a
// weak filter, so receivers also match ports, addresses, RunID and StreamID.
//
// The smallest frames that carry the signature (MinFrameSize) are 64 bytes
// for IPv4/UDP, 68 with a tag, 84 for IPv6/UDP and 88 with a tag.
package framing
