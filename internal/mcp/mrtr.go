package mcp

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-mcp/nexus/internal/jsontext"
)

// Multi round-trip requests (MRTR, SEP-2322, protocol 2026-07-28): a
// stateless server cannot send the client a request of its own, so a call
// whose function asks something ends with
//
//	{"resultType":"input_required","inputRequests":{KEY:{method,params}},"requestState":STATE}
//
// and the client retries the same tools/call with "inputResponses"
// (KEY → the client's result) and that requestState. nexus then runs the
// function again from the start; this time its questions find their
// answers at once. Nothing of the call stays in nexus's memory between
// rounds: every answer so far travels in the state, signed, so the retry
// may reach any node that shares the key (NEXUS_STATE_KEY).

// DefaultStateTTL is how long a requestState stays valid.
const DefaultStateTTL = 30 * time.Minute

// inputQuiet is how long nexus waits, after a question it cannot answer,
// for more questions of the same round (a function may ask several at
// once, from threads) before it ends the call with input_required.
const inputQuiet = 30 * time.Millisecond

// Question is one question a running function puts to the client.
type Question struct {
	// Kind is "elicit", "sample" or "roots".
	Kind string
	// Key names the question among the call's: the inputRequests key of
	// 2026-07-28. Empty, nexus derives one from Kind and Params, so that
	// the same question asked again on a retry finds its answer.
	Key string
	// Params are the MCP request's params.
	Params json.RawMessage
}

// questionKey is q's inputRequests key.
func questionKey(q Question) string {
	if q.Key != "" {
		return q.Key
	}
	sum := sha256.Sum256(q.Params)
	return q.Kind + "_" + hex.EncodeToString(sum[:6])
}

// requestState is what a retry brings back, signed (see sealState).
type requestState struct {
	Tool    string                     `json:"tool"`
	Args    string                     `json:"args"`    // the arguments' argsDigest
	Expires int64                      `json:"expires"` // Unix milliseconds
	Answers map[string]json.RawMessage `json:"answers"` // every answer of the rounds before
	Asked   []string                   `json:"asked"`   // the keys the last round asked for
}

// argsDigest identifies a call's arguments so that a state cannot be
// replayed with others: the CRC-32C and length of their canonical form
// (jsontext.Canonical: members sorted by key, no space, strings decoded,
// numbers by exact value), which a state holds as argsDigest.String(). A
// retry that sends the same arguments in another key order, with other
// space or escapes, or 1e2 for 100, is the same call; any other value is
// not, integers beyond 2^53 included: a client or proxy may write the
// arguments again, but must not change them (docs/mcp.md, "Talk-back:
// elicitation, sampling, roots"). CRC-32C (hardware, ~20 GB/s) adds nothing
// to the canonical pass; it guards against a retry with other arguments by
// mistake, not against a client forging a collision, which would gain it
// nothing: the answers in the state are the client's own.
type argsDigest struct {
	crc uint32
	n   int
}

// digestArgs is the digest of a call's raw arguments. Absent or null
// arguments are {}, as argmap reads them. Arguments that are not JSON
// never reach a round (argmap refuses them first); their digest is of
// their bytes.
func digestArgs(args json.RawMessage) argsDigest {
	text := args
	if t := bytes.TrimSpace(args); len(t) == 0 || string(t) == "null" {
		text = []byte("{}")
	}
	var d argsDigest
	err := jsontext.Canonical(text, func(p []byte) {
		d.crc = crc32.Update(d.crc, crc32cTable(), p)
		d.n += len(p)
	})
	if err != nil {
		return argsDigest{crc: crc32.Checksum(args, crc32cTable()), n: len(args)}
	}
	return d
}

// String is the digest as a state carries it, made only when a state is
// sealed or opened.
func (d argsDigest) String() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], d.crc)
	binary.BigEndian.PutUint64(b[4:], uint64(d.n))
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// crc32cTable is made when first needed: making it costs every nexus
// process a fifth of a millisecond at start, a one-shot `nexus run` too.
var crc32cTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// newStateKey is the key of a server given none: random, so its states
// are good on this process only.
func newStateKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return k
}

// sealState encodes st as BODY.MAC, both base64url: BODY the JSON, MAC
// its HMAC-SHA256 under the server's key.
func (s *Server) sealState(st *requestState) (string, error) {
	body, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	b := base64.RawURLEncoding.EncodeToString(body)
	return b + "." + base64.RawURLEncoding.EncodeToString(s.stateMAC(b)), nil
}

func (s *Server) stateMAC(body string) []byte {
	m := hmac.New(sha256.New, s.stateKey)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// openState checks a retry's requestState: signed by this key, not
// expired, and made for this tool and these arguments.
func (s *Server) openState(raw json.RawMessage, tool, args string) (*requestState, *Error) {
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState must be the string a previous input_required result gave, got %s", jsonKind(raw))
	}
	body, mac, ok := strings.Cut(text, ".")
	want := s.stateMAC(body)
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err != nil || !hmac.Equal(got, want) {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState failed its integrity check: it was altered, or made by a server with another key (set the same NEXUS_STATE_KEY on every node)")
	}
	js, err := base64.RawURLEncoding.DecodeString(body)
	var st requestState
	if err != nil || json.Unmarshal(js, &st) != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState is signed but unreadable")
	}
	if time.Now().UnixMilli() > st.Expires {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState expired at %s; call the tool again without it", time.UnixMilli(st.Expires).UTC().Format(time.RFC3339))
	}
	if st.Tool != tool {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState was made for tool '%s', not '%s'", st.Tool, tool)
	}
	if st.Args != args {
		return nil, errorf(CodeInvalidParams, "invalid params: requestState was made for other arguments: a retry must repeat the call's arguments (their values; key order and spacing may differ)")
	}
	return &st, nil
}

// inputRound is one run of a 2026-07-28 call: the answers it has, and the
// questions it asked that have none yet.
//
// A call that never asks pays for the round struct alone: the answers map
// exists only when the request brought answers, and the rest only once the
// function asks what they do not hold.
type inputRound struct {
	tool string
	// args are the call's raw arguments until their digest is needed: a
	// retry's at once, to check its state; a first round's only if the
	// function asks, when the state is sealed. A call that never asks
	// pays nothing for the canonical form, and holds the bytes of its
	// arguments until it ends.
	args         json.RawMessage
	digest       argsDigest
	digested     bool
	capabilities json.RawMessage
	answers      map[string]json.RawMessage // nil when there are none

	mu      sync.Mutex
	pending []pendingQuestion // unanswered, in the order asked
	asked   chan struct{}     // made at the first of them: signalled at each
	cancel  context.CancelFunc
}

type pendingQuestion struct {
	key     string
	request inputRequest
}

type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answer records the client's answer to the question named key.
func (rd *inputRound) answer(key string, v json.RawMessage) {
	if rd.answers == nil {
		rd.answers = map[string]json.RawMessage{}
	}
	rd.answers[key] = v
}

// openRound reads a 2026-07-28 tools/call's inputResponses and
// requestState (SEP-2322) into the round its function runs in. args are
// the call's raw arguments.
func (s *Server) openRound(r *Request, tool string, args json.RawMessage, caps json.RawMessage) (*inputRound, *Error) {
	round := &inputRound{tool: tool, args: args, capabilities: caps}
	raw, hasState := r.param("requestState")
	var asked map[string]bool
	if hasState && !isNull(raw) {
		round.digest, round.digested, round.args = digestArgs(args), true, nil
		st, rpcErr := s.openState(raw, tool, round.digest.String())
		if rpcErr != nil {
			return nil, rpcErr
		}
		round.answers = st.Answers
		asked = make(map[string]bool, len(st.Asked))
		for _, k := range st.Asked {
			asked[k] = true
		}
	}
	responses, ok := r.param("inputResponses")
	if !ok {
		return round, nil
	}
	if jsonKind(responses) != "object" {
		return nil, errorf(CodeInvalidParams, "invalid params: inputResponses must be an object (request key → the client's result), got %s", jsonKind(responses))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(responses, &m); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: inputResponses: %v", err)
	}
	for k, v := range m {
		if asked != nil && !asked[k] {
			continue // SEP-2322: a response to nothing asked is ignored
		}
		if jsonKind(v) != "object" {
			return nil, errorf(CodeInvalidParams, "invalid params: inputResponses[%q] must be the result object of the request, got %s", k, jsonKind(v))
		}
		round.answer(k, v)
	}
	return round, nil
}

// ask answers a question from the round's answers, or records it and
// blocks until the call ends: soon after its last unanswered question the
// round ends the call (see watch), and the client gets them all.
func (rd *inputRound) ask(ctx context.Context, q Question) (json.RawMessage, error) {
	k, err := askable(q.Kind, StatelessVersion, rd.capabilities)
	if err != nil {
		return nil, err
	}
	key := questionKey(q)
	rd.mu.Lock()
	if a, ok := rd.answers[key]; ok {
		rd.mu.Unlock()
		return a, nil
	}
	if !slices.ContainsFunc(rd.pending, func(p pendingQuestion) bool { return p.key == key }) {
		rd.pending = append(rd.pending, pendingQuestion{key, inputRequest{Method: k.method, Params: q.Params}})
	}
	start := rd.asked == nil
	if start {
		rd.asked = make(chan struct{}, 1)
	}
	asked := rd.asked
	rd.mu.Unlock()
	if start {
		go rd.watch(asked)
	}
	select {
	case asked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// watch ends the call once no new question has come for inputQuiet.
func (rd *inputRound) watch(asked <-chan struct{}) {
	t := time.NewTimer(inputQuiet)
	defer t.Stop()
	for {
		select {
		case <-asked:
			t.Reset(inputQuiet)
		case <-t.C:
			rd.cancel()
			return
		}
	}
}

// needsInput reports whether the round asked something it had no answer to.
func (rd *inputRound) needsInput() bool {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return len(rd.pending) > 0
}

// inputRequired is the round's result: its questions, and the state the
// retry must bring back.
func (s *Server) inputRequired(rd *inputRound) (object, error) {
	rd.mu.Lock()
	keys := make([]string, 0, len(rd.pending))
	reqs := make(object, 0, len(rd.pending))
	for _, p := range rd.pending {
		keys = append(keys, p.key)
		reqs = append(reqs, member{Key: p.key, Value: p.request})
	}
	rd.mu.Unlock()
	sort.Strings(keys)
	if !rd.digested { // a first round
		rd.digest, rd.digested, rd.args = digestArgs(rd.args), true, nil
	}
	state, err := s.sealState(&requestState{
		Tool: rd.tool, Args: rd.digest.String(),
		Expires: time.Now().Add(s.opts.StateTTL).UnixMilli(),
		Answers: rd.answers, Asked: keys,
	})
	if err != nil {
		return nil, fmt.Errorf("sealing requestState: %w", err)
	}
	return object{
		{Key: "resultType", Value: "input_required"},
		{Key: "inputRequests", Value: reqs},
		{Key: "requestState", Value: state},
		{Key: "_meta", Value: s.current().infoMeta},
	}, nil
}
