package agent_test

import (
	"os"
	"testing"

	"github.com/rfc2544/rfc2544/lab/relay"
)

// TestMain lets this test binary be the relay DUT of a lab its tests bring
// up (relay.Enter): TestAgentTCPRFC6349Lab needs the relay's delay.
func TestMain(m *testing.M) {
	relay.Enter()
	os.Exit(m.Run())
}
