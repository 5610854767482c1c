package adapter

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/metering"
)

// A graceful shutdown lets the calls in flight finish within its timeout:
// they are served and counted like any other. HaltCalls ends those still
// running when the timeout is over: each one's upstream request is
// cancelled, its admission given back whatever the counting policy (it
// was not served), and its client, if still there, told to retry. So a
// replica that shuts down gracefully leaves no call counted but not
// served. (A replica killed with SIGKILL cannot: the calls it had admitted
// and not answered stay counted, at most max_concurrent_calls of them.)

// HaltCalls stops every upstream call still running and refunds it (see
// above). Call it when http.Server.Shutdown ran out of time, then Close.
// It is safe to call more than once.
func (s *Server) HaltCalls() { s.haltAll() }

// halted is the result of a call that HaltCalls stopped: refunded, its
// usage event not_run, and an error result saying to retry.
func (s *Server) halted(ctx context.Context, a *admission) *mcp.CallToolResult {
	s.logger.Warn("tools/call stopped by the shutdown; refunding it", "key_id", a.call.KeyID, "tool", a.call.Tool)
	s.callDone(ctx, a.call.Tool, metering.OutcomeNotRun)
	if s.opts.Meter != nil && a.metered {
		s.refundAdmission(a, true)
	}
	return errorResult(fmt.Sprintf("restmcp is shutting down: the call to %s was stopped before the upstream API answered and is not billed; retry it", a.call.Tool))
}
