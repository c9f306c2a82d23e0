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
package framing
