package agent

import (
	"net"
	"time"

	"github.com/rfc2544/rfc2544/trials/agent/wire"
)

// RawPeer is one side of a control connection driven message by message,
// for tests that misbehave on purpose.
type RawPeer struct{ c *conn }

func NewRawPeer(nc net.Conn, version uint16) *RawPeer {
	c := newConn(nc)
	c.version = version
	return &RawPeer{c}
}

func (p *RawPeer) Write(m wire.Message) error                       { return p.c.write(m) }
func (p *RawPeer) Read(timeout time.Duration) (wire.Message, error) { return p.c.read(timeout) }
func (p *RawPeer) Transcript() []byte                               { return append([]byte(nil), p.c.transcript...) }
func (p *RawPeer) SetKey(key []byte, agentSide bool)                { p.c.setKey(key, agentSide) }

var (
	ControllerProof = controllerProof
	AgentProof      = agentProof
	SessionKey      = sessionKey
)

// SetVersion makes a client speak another protocol version.
func SetVersion(c *DialConfig, v uint16) { c.version = v }
