package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// mrtrCall is a 2026-07-28 tools/call of testdata/everything's two-round
// fixture, with what the retry carries (extra: `"inputResponses":...,
// "requestState":"..."`, or "").
func mrtrCall(extra string) string {
	if extra != "" {
		extra += ","
	}
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_input_required_result_multi_round","arguments":{},` + extra +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
}

// mrtrRound reads one reply: the result, and for an input_required one
// the retry's extra params answering each question with answer.
func mrtrRound(t *testing.T, body string, answer func(key string) string) (map[string]any, string) {
	t.Helper()
	var reply struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil || reply.Result == nil {
		t.Fatalf("reply %s: %v", body, err)
	}
	if reply.Result["resultType"] != "input_required" {
		return reply.Result, ""
	}
	var parts []string
	for key := range reply.Result["inputRequests"].(map[string]any) {
		parts = append(parts, `"`+key+`":`+answer(key))
	}
	return reply.Result, `"inputResponses":{` + strings.Join(parts, ",") + `},"requestState":"` + reply.Result["requestState"].(string) + `"`
}

// mrtrHeaders are the routing headers a 2026-07-28 tools/call carries.
var mrtrHeaders = statelessHeaders("test_input_required_result_multi_round")

func accept(field, value string) string {
	return `{"action":"accept","content":{"` + field + `":"` + value + `"}}`
}

func multiRoundAnswer(key string) string {
	if key == "step1" {
		return accept("name", "Ada")
	}
	return accept("color", "blue")
}

// MRTR behind a load balancer (docs/deploy.md, "Scale-out behind nginx"): a
// function that asks in two rounds, called through nginx, whose round-robin
// sends each of the three requests to another node. Nodes that share
// NEXUS_STATE_KEY accept each other's requestState; a node with another key
// refuses it.
func TestScaleOutMRTR(t *testing.T) {
	testenv.Long(t)
	testenv.NeedPython(t)
	c := startCluster(t, clusterOptions{Program: program("everything"), Env: []string{"NEXUS_STATE_KEY=one key for every node of this deployment"}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := &http.Client{}
	nodes := map[string]bool{}
	extra := ""
	var final map[string]any
	for round := 1; round <= 3 && final == nil; round++ {
		status, h, body, err := c.post(ctx, client, mrtrCall(extra), mrtrHeaders...)
		if err != nil || status != 200 {
			t.Fatalf("round %d: %d %v %s", round, status, err, body)
		}
		nodes[h.Get("Nexus-Node")] = true
		var res map[string]any
		res, extra = mrtrRound(t, body, multiRoundAnswer)
		if extra == "" {
			final = res
		}
	}
	if final == nil {
		t.Fatal("no complete result after three rounds")
	}
	text, _ := json.Marshal(final["content"])
	if !strings.Contains(string(text), "Ada likes blue") {
		t.Errorf("final result %s", text)
	}
	if len(nodes) < 2 {
		t.Errorf("every round reached the same node %v: round-robin did not spread them", nodes)
	}
	t.Logf("three rounds answered by nodes %v", nodes)

	// The same, node by node: round 1 on n1, its retry on n2.
	_, first := c.nodes[0].srv.rpc(mrtrCall(""), mrtrHeaders...)
	_, retry := mrtrRound(t, first, multiRoundAnswer)
	_, second := c.nodes[1].srv.rpc(mrtrCall(retry), mrtrHeaders...)
	if res, _ := mrtrRound(t, second, multiRoundAnswer); res["resultType"] != "input_required" || res["inputRequests"].(map[string]any)["step2"] == nil {
		t.Errorf("n2 on n1's state: %s", second)
	}

	// A node with a key of its own refuses that state.
	other := startHTTP(t, []string{"NEXUS_STATE_KEY=another deployment's key entirely"}, "serve", "--port", "0", program("everything"))
	_, refused := other.rpc(mrtrCall(retry), mrtrHeaders...)
	if !strings.Contains(refused, `"code":-32602`) || !strings.Contains(refused, "integrity check") {
		t.Errorf("a node with another key: %s", refused)
	}
}
