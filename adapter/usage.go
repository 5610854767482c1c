package adapter

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/metering"
)

// usage answers GET /usage: the caller's usage under its plan, as the
// Meter's report encoded in JSON. The key is read like on the MCP endpoint
// (x-api-key header, Authorization: Bearer, ?api_key=). Without a key: 401;
// unknown or revoked key: 401; key store or meter down: 503 with
// Retry-After; no Meter: 404. Reading usage counts nothing.
func (s *Server) usage(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	if s.opts.Meter == nil {
		writeJSON(c, http.StatusNotFound, gin.H{"error": "usage metering is not enabled on this server"})
		return
	}
	cred := exchangeFrom(c.Request.Context()).cred
	if cred.unsafe != "" {
		c.Header("WWW-Authenticate", `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`)
		writeJSON(c, http.StatusUnauthorized, gin.H{"error": "invalid API key: it contains " + cred.unsafe + ", which no API key has; send the key exactly as issued"})
		return
	}
	if cred.key == "" && cred.idp == nil {
		c.Header("WWW-Authenticate", `ApiKey realm="restmcp", Bearer realm="restmcp"`)
		writeJSON(c, http.StatusUnauthorized, gin.H{"error": "authentication required: send your API key in the x-api-key header, as ?api_key=<key>, or as Authorization: Bearer <key>"})
		return
	}
	var plan *metering.Plan
	if cred.idp != nil {
		// The provider's caller: the plan its token names, or its bound
		// key's (idpfront.go).
		var r *refusal
		if plan, r = s.identityPlan(c.Request.Context(), exchangeFrom(c.Request.Context())); r != nil {
			s.renderPlainRefusal(c, r)
			return
		}
	} else if s.opts.Keys != nil {
		var r *refusal
		if plan, r = s.resolveKey(c.Request.Context(), cred, ""); r != nil {
			s.renderPlainRefusal(c, r)
			return
		}
	}
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
	t := time.Now()
	report, err := s.opts.Meter.Report(ctx, cred.keyID, plan)
	cancel()
	s.metrics.meterOp("report", time.Since(t), err)
	if err != nil {
		s.logger.Error("reading usage failed", "key_id", cred.keyID, "error", err.Error())
		c.Header("Retry-After", strconv.Itoa(meterRetryAfterSeconds))
		writeJSON(c, http.StatusServiceUnavailable, gin.H{"error": "usage metering is temporarily unavailable; retry in " + strconv.Itoa(meterRetryAfterSeconds) + " seconds"})
		return
	}
	if tbl := s.table.Load(); tbl.apis {
		report.SplitByAPI(func(tool string) string { return tbl.apiOf(tool, nil) })
	}
	writeJSON(c, http.StatusOK, report)
}

// listByPlan is go-sdk receiving middleware: with Options.ListByPlan, a
// tools/list from a caller who presented a key lists only the tools the
// key's plan allows. The key comes from the request context, where the
// credential middleware put it (in stateless mode the SDK derives each
// handler's context from the POST's). A request without a key, or whose
// key cannot be resolved, gets the full list, as tools/list needs no key.
// A filtered list is marked cacheScope "private" so that no intermediary
// serves one caller's list to another.
func (s *Server) listByPlan(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		cred := credentialFrom(ctx)
		tbl := s.tableFor(ctx)
		if !ok || cred.key == "" || tbl.compact != nil {
			return res, err
		}
		plan, ok := s.listPlan(ctx, cred)
		if !ok {
			return res, err
		}
		out := *lr
		out.Tools = tbl.planTools(plan, lr.Tools)
		out.CacheScope = "private"
		return &out, nil
	}
}

// listPlan resolves the key of a tools/list to its plan (list_by_plan);
// false, logged at Debug, when it cannot: the list is then not filtered.
func (s *Server) listPlan(ctx context.Context, cred *credential) (*metering.Plan, bool) {
	rctx, cancel := context.WithTimeout(ctx, s.opts.MeterTimeout)
	t := time.Now()
	plan, err := s.opts.Keys.ResolveKey(rctx, cred.key)
	cancel()
	s.metrics.meterOp("resolve", time.Since(t), nil)
	if err != nil || plan == nil {
		s.logger.Debug("tools/list not filtered: key not resolved", "key_id", cred.keyID, "error", errString(err))
		return nil, false
	}
	return plan, true
}

// planTools returns the tools of list that plan allows, in order, with the
// companion tool when one of them may start a job.
func (tbl *toolTable) planTools(plan *metering.Plan, list []*mcp.Tool) []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(list))
	jobs := false
	for _, t := range list {
		if ot := tbl.tools[t.Name]; ot != nil && plan.Allows(t.Name, ot.Tags) {
			out = append(out, t)
			jobs = jobs || ot.StartsJobs
		}
	}
	if jobs && tbl.jobTool != "" {
		for _, t := range list {
			if t.Name == tbl.jobTool {
				out = append(out, t)
				slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
			}
		}
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// apiOf returns the API of the tool named tool, or of the operation of a
// compact-mode call_operation (inner), among several documents served on
// one endpoint; "" for one document or an unknown tool.
func (tbl *toolTable) apiOf(tool string, inner *innerCall) string {
	if inner != nil {
		tool = inner.name
	}
	if t := tbl.tools[tool]; t != nil {
		return t.API
	}
	return ""
}
