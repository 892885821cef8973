package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nexus-mcp/nexus/internal/testenv"
)

// The fidelity program (testdata/fidelity) implements the same functions in
// Python, R and C++, as the commands <fn>_py, <fn>_r and <fn>_cpp. These
// tests call every function in every language with the same arguments and
// check that each language gives the right answer, byte for byte the same
// result as the others, or, where a language cannot hold a value, the
// documented error (docs/pools.md, "Values").

// fidelityLangs are the command suffixes, in the manifest's pool order.
var fidelityLangs = []string{"py", "r", "cpp"}

// outcome is what one language gives instead of a case's want.
type outcome struct {
	text     string // the exact result text (with isError, the exact message)
	isError  bool
	contains string // with isError and no text: a part of the message (its wording comes from a library)
}

func gives(text string) outcome    { return outcome{text: text} }
func fails(message string) outcome { return outcome{text: message, isError: true} }
func failsWith(part string) outcome {
	return outcome{isError: true, contains: part}
}

// fidelityCase is one call of one function in every language.
type fidelityCase struct {
	fn     string // the function, without the language suffix
	args   string // the raw arguments object, so that numbers keep their exact text
	want   string // the result text every language gives, except those in except
	except map[string]outcome
}

// The messages of languages that cannot hold a value.
const (
	// The R runtime refuses an integer that no double holds exactly.
	rInexact = "integer %s cannot be represented exactly in R: integers beyond 32 bits arrive as doubles, which hold every integer only up to 2^53 = 9007199254740992"
	// R's integers are 32-bit; the runtime turns their overflow into the call's error.
	rIntOverflow = "NAs produced by integer overflow (R integers hold at most 2147483647: use as.numeric() for larger numbers)"
	// The R pool's own guard for sums (testdata/fidelity/pools/r/pool.R).
	rSumGuard = "the sum reaches 2^53, beyond which R's doubles skip integers"
	// The C++ pool's Int is int64_t.
	cppTooBig = "does not fit in int64_t"
)

// wrongType is the error of each language's fn_<lang> for a result that
// is not of its declared type (internal/argmap/result.go).
func wrongType(fn, what string) map[string]outcome {
	out := map[string]outcome{}
	for _, lang := range fidelityLangs {
		out[lang] = fails(fmt.Sprintf("'%s_%s' returned %s", fn, lang, what))
	}
	return out
}

func rCannot(n string) map[string]outcome {
	return map[string]outcome{"r": fails(fmt.Sprintf(rInexact, n))}
}

// fidelityCases are every function of the fidelity program with the inputs
// that matter for it: the boundaries of each language's types.
func fidelityCases() []fidelityCase {
	cases := []fidelityCase{
		// Int: R holds 32-bit integers, beyond them doubles (exact up to 2^53,
		// and beyond that only some); C++ int64_t; Python any size.
		{fn: "idInt", args: `{"_1":0}`, want: `0`},
		{fn: "idInt", args: `{"_1":-1}`, want: `-1`},
		{fn: "idInt", args: `{"_1":2147483647}`, want: `2147483647`},
		{fn: "idInt", args: `{"_1":-2147483647}`, want: `-2147483647`},
		{fn: "idInt", args: `{"_1":2147483648}`, want: `2147483648`},
		{fn: "idInt", args: `{"_1":-2147483648}`, want: `-2147483648`},
		{fn: "idInt", args: `{"_1":1099511627776}`, want: `1099511627776`}, // 2^40: a double in R, exact
		{fn: "idInt", args: `{"_1":9007199254740992}`, want: `9007199254740992`},
		{fn: "idInt", args: `{"_1":-9007199254740992}`, want: `-9007199254740992`},
		{fn: "idInt", args: `{"_1":9007199254740993}`, want: `9007199254740993`, except: rCannot("9007199254740993")},
		{fn: "idInt", args: `{"_1":-9007199254740993}`, want: `-9007199254740993`, except: rCannot("-9007199254740993")},
		{fn: "idInt", args: `{"_1":1152921504606846976}`, want: `1152921504606846976`}, // 2^60: a double holds it
		{fn: "idInt", args: `{"_1":9223372036854775807}`, want: `9223372036854775807`, except: rCannot("9223372036854775807")},
		{fn: "idInt", args: `{"_1":-9223372036854775808}`, want: `-9223372036854775808`},
		{fn: "idInt", args: `{"_1":9223372036854775808}`, want: `9223372036854775808`,
			except: map[string]outcome{"cpp": fails("argument 1: 9223372036854775808 does not fit in int64_t")}},
		// One below -2^63 rounds to -2^63 as a double: C++ must refuse it, not take -2^63.
		{fn: "idInt", args: `{"_1":-9223372036854775809}`, want: `-9223372036854775809`,
			except: map[string]outcome{"r": fails(fmt.Sprintf(rInexact, "-9223372036854775809")), "cpp": failsWith(cppTooBig)}},
		{fn: "idInt", args: `{"_1":18446744073709551616}`, want: `18446744073709551616`, // 2^64: R's double holds it
			except: map[string]outcome{"cpp": failsWith(cppTooBig)}},
		{fn: "idInt", args: `{"_1":123456789012345678901234567890}`, want: `123456789012345678901234567890`,
			except: map[string]outcome{"r": fails(fmt.Sprintf(rInexact, "123456789012345678901234567890")), "cpp": failsWith(cppTooBig)}},
		{fn: "negInt", args: `{"_1":5}`, want: `-5`},
		{fn: "negInt", args: `{"_1":0}`, want: `0`},
		{fn: "negInt", args: `{"_1":-2147483647}`, want: `2147483647`},
		{fn: "negInt", args: `{"_1":-2147483648}`, want: `2147483648`},
		{fn: "negInt", args: `{"_1":1099511627776}`, want: `-1099511627776`},
		{fn: "negInt", args: `{"_1":-9223372036854775808}`, want: `9223372036854775808`,
			except: map[string]outcome{"cpp": fails("-(-2^63) does not fit in 64 bits")}},

		// Real: IEEE doubles everywhere; nexus writes each result in the
		// shortest form that reads back as the same double.
		{fn: "idReal", args: `{"_1":0.1}`, want: `0.1`},
		{fn: "idReal", args: `{"_1":2.5}`, want: `2.5`},
		{fn: "idReal", args: `{"_1":2}`, want: `2`},
		{fn: "idReal", args: `{"_1":2.0}`, want: `2`},
		{fn: "idReal", args: `{"_1":-0.0}`, want: `-0`},
		{fn: "idReal", args: `{"_1":1e308}`, want: `1e+308`},
		{fn: "idReal", args: `{"_1":1.7976931348623157e308}`, want: `1.7976931348623157e+308`},
		{fn: "idReal", args: `{"_1":5e-324}`, want: `5e-324`},
		{fn: "idReal", args: `{"_1":1e21}`, want: `1e+21`},
		{fn: "idReal", args: `{"_1":1e-7}`, want: `1e-7`},
		{fn: "idReal", args: `{"_1":123456.789}`, want: `123456.789`},
		{fn: "idReal", args: `{"_1":0.30000000000000004}`, want: `0.30000000000000004`},
		// A Real written as a whole number beyond 2^53 reaches every pool as
		// a float (nexus writes it 9007199254740993.0): each language rounds
		// it to the nearest double alike.
		{fn: "idReal", args: `{"_1":9007199254740993}`, want: `9007199254740992`},
		{fn: "halfReal", args: `{"_1":0.1}`, want: `0.05`},
		{fn: "halfReal", args: `{"_1":3}`, want: `1.5`},
		{fn: "halfReal", args: `{"_1":-1}`, want: `-0.5`},
		{fn: "halfReal", args: `{"_1":5e-324}`, want: `0`},

		// Str: UTF-8 through every runtime; JSON escapes only what must be.
		{fn: "idStr", args: `{"_1":""}`, want: `""`},
		{fn: "idStr", args: `{"_1":"héllo wörld — 日本語 😀"}`, want: `"héllo wörld — 日本語 😀"`},
		{fn: "idStr", args: `{"_1":"\ud83d\ude00 from an escaped surrogate pair"}`, want: `"😀 from an escaped surrogate pair"`},
		{fn: "idStr", args: `{"_1":"say \"hi\"\n\\n is not a newline\r\n\ttab \\ and / slash"}`,
			want: `"say \"hi\"\n\\n is not a newline\r\n\ttab \\ and / slash"`},
		{fn: "idStr", args: "{\"_1\":\"\\u0001\\u001f\\b\\f\u007f\u2028\u2029\"}", want: "\"\\u0001\\u001f\\b\\f\u007f\u2028\u2029\""},
		{fn: "idStr", args: `{"_1":"null"}`, want: `"null"`},
		{fn: "strLen", args: `{"_1":""}`, want: `0`},
		{fn: "strLen", args: `{"_1":"héllo 😀 日本"}`, want: `10`},
		{fn: "strLen", args: `{"_1":"e\u0301"}`, want: `2`}, // code points, not graphemes
		{fn: "strLen", args: `{"_1":"\n\t\"\\"}`, want: `4`},
		{fn: "exclaim", args: `{"_1":"é\"\n"}`, want: `"é\"\n!"`},
		{fn: "exclaim", args: `{"_1":""}`, want: `"!"`},

		// Bool.
		{fn: "idBool", args: `{"_1":true}`, want: `true`},
		{fn: "idBool", args: `{"_1":false}`, want: `false`},
		{fn: "notBool", args: `{"_1":true}`, want: `false`},
		{fn: "notBool", args: `{"_1":false}`, want: `true`},

		// [Int]: a one-element list stays a list (R's I()).
		{fn: "idInts", args: `{"_1":[]}`, want: `[]`},
		{fn: "idInts", args: `{"_1":[7]}`, want: `[7]`},
		{fn: "idInts", args: `{"_1":[1,-2,2147483648,1099511627776,-9007199254740992]}`, want: `[1,-2,2147483648,1099511627776,-9007199254740992]`},
		{fn: "idInts", args: `{"_1":[1,9007199254740993]}`, want: `[1,9007199254740993]`, except: rCannot("9007199254740993")},
		{fn: "sumInts", args: `{"_1":[]}`, want: `0`},
		{fn: "sumInts", args: `{"_1":[1,2,3]}`, want: `6`},
		{fn: "sumInts", args: `{"_1":[2147483647,1]}`, want: `2147483648`},
		{fn: "sumInts", args: `{"_1":[9007199254740992,1]}`, want: `9007199254740993`,
			except: map[string]outcome{"r": fails(rSumGuard)}},
		{fn: "sumInts", args: `{"_1":[9223372036854775807,1]}`, want: `9223372036854775808`,
			except: map[string]outcome{"r": fails(fmt.Sprintf(rInexact, "9223372036854775807")), "cpp": fails("the sum does not fit in 64 bits")}},

		// [Real]: sums are plain left-to-right additions in every language.
		{fn: "idReals", args: `{"_1":[]}`, want: `[]`},
		{fn: "idReals", args: `{"_1":[1.5]}`, want: `[1.5]`},
		{fn: "idReals", args: `{"_1":[1,2.5,0.1,-0.0,1e308,5e-324]}`, want: `[1,2.5,0.1,-0,1e+308,5e-324]`},
		{fn: "sumReals", args: `{"_1":[]}`, want: `0`},
		{fn: "sumReals", args: `{"_1":[0.1,0.2,0.3]}`, want: `0.6000000000000001`},
		{fn: "sumReals", args: `{"_1":[1e16,1,-1e16]}`, want: `0`},
		// Infinity has no JSON number: every language gives the string
		// "Infinity" (docs/mcp.md, "Results, NaN and infinity").
		{fn: "sumReals", args: `{"_1":[1e308,1e308]}`, want: `"Infinity"`},
		{fn: "sumReals", args: `{"_1":[-1e308,-1e308]}`, want: `"-Infinity"`},
		{fn: "sumReals", args: `{"_1":[1e308,1e308,-1e308,-1e308,1]}`, want: `"Infinity"`}, // inf - 1e308 stays inf

		// Tuples.
		{fn: "swapPair", args: `{"_1":["a",1]}`, want: `[1,"a"]`},
		{fn: "swapPair", args: `{"_1":["é\n",2147483648]}`, want: `[2147483648,"é\n"]`},
		{fn: "idTuple", args: `{"_1":[1,2.5,"x",true]}`, want: `[1,2.5,"x",true]`},
		{fn: "idTuple", args: `{"_1":[1,2.0,"",false]}`, want: `[1,2,"",false]`},
		{fn: "idTuple", args: `{"_1":[1099511627776,0.1,"日本",true]}`, want: `[1099511627776,0.1,"日本",true]`},

		// Records: fields come back in declaration order, whatever order the client used.
		{fn: "idPerson", args: `{"_1":{"name":"Ada","age":36}}`, want: `{"name":"Ada","age":36}`},
		{fn: "idPerson", args: `{"_1":{"age":36,"name":"Ada"}}`, want: `{"name":"Ada","age":36}`},
		{fn: "idPerson", args: `{"_1":{"name":"Zoë \"Z\"\n","age":-1}}`, want: `{"name":"Zoë \"Z\"\n","age":-1}`},
		{fn: "idPerson", args: `{"_1":{"name":"","age":1099511627776}}`, want: `{"name":"","age":1099511627776}`},
		{fn: "birthday", args: `{"_1":{"name":"Ada","age":36}}`, want: `{"name":"Ada","age":37}`},
		{fn: "birthday", args: `{"_1":{"name":"Old","age":2147483647}}`, want: `{"name":"Old","age":2147483648}`,
			except: map[string]outcome{"r": fails(rIntOverflow)}},

		// ?Int: null, omitted (null) and present.
		{fn: "idMaybe", args: `{"_1":null}`, want: `null`},
		{fn: "idMaybe", args: `{}`, want: `null`},
		{fn: "idMaybe", args: `{"_1":5}`, want: `5`},
		{fn: "idMaybe", args: `{"_1":1099511627776}`, want: `1099511627776`},
		{fn: "maybeInc", args: `{"_1":null}`, want: `null`},
		{fn: "maybeInc", args: `{"_1":41}`, want: `42`},
		{fn: "maybeInc", args: `{"_1":2147483647}`, want: `2147483648`, except: map[string]outcome{"r": fails(rIntOverflow)}},

		// Map Str Int: an object in every pool, pairs on the MCP side.
		{fn: "idMap", args: `{"_1":[]}`, want: `[]`},
		{fn: "idMap", args: `{"_1":[["x",1]]}`, want: `[["x",1]]`},
		{fn: "idMap", args: `{"_1":[["a",1],["b",2]]}`, want: `[["a",1],["b",2]]`},
		{fn: "idMap", args: `{"_1":[["a b",3],["é",1099511627776],["日本",-2]]}`, want: `[["a b",3],["é",1099511627776],["日本",-2]]`},
		// C++'s std::map gives its keys back sorted; Python and R keep the client's order.
		{fn: "idMap", args: `{"_1":[["b",2],["a",1]]}`, want: `[["b",2],["a",1]]`,
			except: map[string]outcome{"cpp": gives(`[["a",1],["b",2]]`)}},
		// R cannot hold the empty string as a name: a clear error, never the wrong value.
		{fn: "idMap", args: `{"_1":[["",1]]}`, want: `[["",1]]`, except: map[string]outcome{"r": failsWith("empty key")}},
		{fn: "idMap", args: `{"_1":[["",1],["a",2]]}`, want: `[["",1],["a",2]]`, except: map[string]outcome{"r": failsWith("")}},
		{fn: "mapTotal", args: `{"_1":[]}`, want: `0`},
		{fn: "mapTotal", args: `{"_1":[["b",2],["a",1]]}`, want: `3`},
		{fn: "mapInc", args: `{"_1":[]}`, want: `[]`},
		{fn: "mapInc", args: `{"_1":[["a",1],["b",2]]}`, want: `[["a",2],["b",3]]`},
		{fn: "mapInc", args: `{"_1":[["b",2],["a",1]]}`, want: `[["b",3],["a",2]]`,
			except: map[string]outcome{"cpp": gives(`[["a",2],["b",3]]`)}},

		// Nested records: a record holding a list of records.
		{fn: "idTeam", args: `{"_1":{"name":"none","members":[]}}`, want: `{"name":"none","members":[]}`},
		{fn: "idTeam", args: `{"_1":{"name":"one","members":[{"name":"Ada","age":36}]}}`, want: `{"name":"one","members":[{"name":"Ada","age":36}]}`},
		{fn: "idTeam", args: `{"_1":{"members":[{"age":36,"name":"Ada"},{"name":"Bö","age":1099511627776}],"name":"two"}}`,
			want: `{"name":"two","members":[{"name":"Ada","age":36},{"name":"Bö","age":1099511627776}]}`},
		{fn: "teamAges", args: `{"_1":{"name":"none","members":[]}}`, want: `[]`},
		{fn: "teamAges", args: `{"_1":{"name":"one","members":[{"name":"Ada","age":36}]}}`, want: `[36]`},
		{fn: "teamAges", args: `{"_1":{"name":"two","members":[{"name":"Ada","age":36},{"name":"Bö","age":40}]}}`, want: `[36,40]`},

		// A function that fails: the message, with Python's exception class in front.
		{fn: "fail", args: `{"_1":"x \"y\" é"}`, want: "", except: map[string]outcome{
			"py": fails(`ValueError: boom: x "y" é`), "r": fails(`boom: x "y" é`), "cpp": fails(`boom: x "y" é`),
		}},
		{fn: "chatty", args: `{}`, want: `"done"`},

		// Wrong-typed results, on purpose: every language's is an isError
		// naming the command, whatever the pool sent.
		{fn: "claimsInt", args: `{}`, except: wrongType("claimsInt", "a string where its type says integer")},
		{fn: "claimsRecord", args: `{}`, except: wrongType("claimsRecord", "an object without its field 'age'")},
	}
	return append(cases, longCases()...)
}

// longCases are long lists and a long string, with their answers computed
// here from the values themselves.
func longCases() []fidelityCase {
	ints := make([]string, 10000)
	var intSum int64
	for i := range ints {
		n := int64(i)*1000003 - 5000000000 // beyond 32 bits at both ends
		ints[i] = strconv.FormatInt(n, 10)
		intSum += n
	}
	intList := "[" + strings.Join(ints, ",") + "]"

	reals := make([]float64, 10000)
	realText := make([]string, len(reals))
	sum := 0.0
	for i := range reals {
		reals[i] = float64(i+1) / 7 * math.Pow(10, float64(i%41-20))
		realText[i] = strconv.FormatFloat(reals[i], 'g', -1, 64)
		sum += reals[i]
	}
	canonical, _ := json.Marshal(reals) // nexus writes each Real as encoding/json does
	canonicalSum, _ := json.Marshal(sum)

	text := strings.Repeat("héllo \"wörld\"\n\t😀 日本 \\ ", 4000)
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false)
	enc.Encode(text)
	textJSON := strings.TrimSuffix(quoted.String(), "\n")

	return []fidelityCase{
		{fn: "idInts", args: `{"_1":` + intList + `}`, want: intList},
		{fn: "sumInts", args: `{"_1":` + intList + `}`, want: strconv.FormatInt(intSum, 10)},
		{fn: "idReals", args: `{"_1":[` + strings.Join(realText, ",") + `]}`, want: string(canonical)},
		{fn: "sumReals", args: `{"_1":[` + strings.Join(realText, ",") + `]}`, want: string(canonicalSum)},
		{fn: "idStr", args: `{"_1":` + textJSON + `}`, want: textJSON},
		{fn: "strLen", args: `{"_1":` + textJSON + `}`, want: strconv.Itoa(utf8.RuneCountInString(text))},
	}
}

// requireFidelity skips when a language of the fidelity program is missing.
func requireFidelity(t *testing.T) {
	t.Helper()
	for _, why := range []string{testenv.PythonMissing(), rAvailable()} {
		if why != "" {
			testenv.MissingTool(t, why)
		}
	}
	if _, err := os.Stat(filepath.Join(program("fidelity"), "pools", "cpp", "pool-cpp.out")); err != nil {
		testenv.MissingTool(t, "testdata/fidelity's C++ pool is not built (needs g++ and nlohmann-json3-dev; run make deps)")
	}
}

// toolResult is a tools/call result, its structuredContent kept raw.
type toolResult struct {
	raw               json.RawMessage // the whole result object, as nexus wrote it
	text              string
	isError           bool
	structuredContent json.RawMessage
}

// callRaw calls a tool with raw JSON arguments and returns its result.
func (s *server) callRaw(id int, name, args string) toolResult {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args))
	line := s.recvRaw()
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &reply); err != nil || string(reply.ID) != strconv.Itoa(id) || reply.Result == nil {
		s.t.Fatalf("%s %s: want the result of call %d, got %.300s", name, args, id, line)
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(reply.Result, &res); err != nil || len(res.Content) != 1 || res.Content[0].Type != "text" {
		s.t.Fatalf("%s %s: want one text block, got %.300s", name, args, line)
	}
	return toolResult{raw: reply.Result, text: res.Content[0].Text, isError: res.IsError, structuredContent: res.StructuredContent}
}

// brief shortens long arguments and texts in messages.
func brief(s string) string {
	if len(s) > 120 {
		return s[:120] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// recordReturns are the functions that return a record: their result also
// fills structuredContent.
var recordReturns = map[string]bool{"idPerson": true, "birthday": true, "idTeam": true, "claimsRecord": true}

// callInEachLanguage calls fn_<lang> with args for each of langs, ids
// from *id on, and returns each language's result.
func (s *server) callInEachLanguage(id *int, fn, args string, langs []string) map[string]toolResult {
	s.t.Helper()
	results := map[string]toolResult{}
	for _, lang := range langs {
		*id++
		results[lang] = s.callRaw(*id, fn+"_"+lang, args)
	}
	return results
}

// sameInEachLanguage fails the test unless the results of langs are
// byte-identical: text, structuredContent and isError alike.
func sameInEachLanguage(t *testing.T, fn, args string, results map[string]toolResult, langs []string) {
	t.Helper()
	for _, lang := range langs[min(1, len(langs)):] {
		if a, b := results[langs[0]].raw, results[lang].raw; !bytes.Equal(a, b) {
			t.Errorf("%s %s: %s and %s differ:\n %s: %s\n %s: %s", fn, brief(args), langs[0], lang, langs[0], brief(string(a)), lang, brief(string(b)))
		}
	}
}

func TestFidelitySameAnswersInEveryLanguage(t *testing.T) {
	requireFidelity(t)
	s := startServer(t, program("fidelity"))
	s.handshake()
	id := 0
	for _, c := range fidelityCases() {
		results := s.callInEachLanguage(&id, c.fn, c.args, fidelityLangs)
		for _, lang := range fidelityLangs {
			name, got := c.fn+"_"+lang, results[lang]
			want, excepted := c.except[lang]
			if !excepted {
				want = gives(c.want)
			}
			switch {
			case want.isError && want.text == "":
				if !got.isError || !strings.Contains(got.text, want.contains) {
					t.Errorf("%s %s = %q (isError %v), want an error containing %q", name, brief(c.args), brief(got.text), got.isError, want.contains)
				}
			case got.isError != want.isError || got.text != want.text:
				t.Errorf("%s %s = %q (isError %v)\n want %q (isError %v)", name, brief(c.args), brief(got.text), got.isError, brief(want.text), want.isError)
			case recordReturns[c.fn] && !want.isError && string(got.structuredContent) != want.text:
				t.Errorf("%s %s: structuredContent %s, want %s", name, brief(c.args), got.structuredContent, want.text)
			}
		}
		// The languages that hold the value give the same result.
		holding := slices.DeleteFunc(slices.Clone(fidelityLangs), func(lang string) bool {
			_, excepted := c.except[lang]
			return excepted
		})
		sameInEachLanguage(t, c.fn, c.args, results, holding)
	}
	if err := s.closeAndWait(); err != nil {
		t.Errorf("nexus exit: %v", err)
	}
}

// fidelityManifest is the part of testdata/fidelity/manifest.json these
// tests rely on.
type fidelityManifest struct {
	Pools []struct {
		Lang string `json:"lang"`
	} `json:"pools"`
	Commands []struct {
		Name   string          `json:"name"`
		Mid    int             `json:"mid"`
		Pool   int             `json:"pool"`
		Args   json.RawMessage `json:"args"`
		Return json.RawMessage `json:"return"`
	} `json:"commands"`
}

// Every function of the fidelity program exists in each language with the
// same arguments and return type, under its own mid, and has test cases.
func TestFidelityProgramShape(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(program("fidelity"), "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m fidelityManifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var langs []string
	for _, p := range m.Pools {
		langs = append(langs, p.Lang)
	}
	if strings.Join(langs, ",") != strings.Join(fidelityLangs, ",") {
		t.Fatalf("pools %v, want %v", langs, fidelityLangs)
	}
	type entry struct{ args, ret string }
	byFn := map[string]map[string]entry{}
	mids := map[int]string{}
	for _, c := range m.Commands {
		i := strings.LastIndexByte(c.Name, '_')
		if i < 0 {
			t.Errorf("command %s has no language suffix", c.Name)
			continue
		}
		fn, lang := c.Name[:i], c.Name[i+1:]
		if c.Pool < 0 || c.Pool >= len(langs) || langs[c.Pool] != lang {
			t.Errorf("command %s runs in pool %d, want the %s pool", c.Name, c.Pool, lang)
		}
		if other, dup := mids[c.Mid]; dup {
			t.Errorf("commands %s and %s share mid %d", other, c.Name, c.Mid)
		}
		mids[c.Mid] = c.Name
		if byFn[fn] == nil {
			byFn[fn] = map[string]entry{}
		}
		// Descriptions name the language; everything else must agree.
		byFn[fn][lang] = entry{string(c.Args), stripDesc(t, c.Return)}
	}
	tested := map[string]bool{}
	for _, c := range fidelityCases() {
		tested[c.fn] = true
	}
	var fns []string
	for fn := range byFn {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	for _, fn := range fns {
		impl := byFn[fn]
		for _, lang := range fidelityLangs {
			if _, ok := impl[lang]; !ok {
				t.Errorf("%s has no %s implementation (%s_%s)", fn, lang, fn, lang)
			} else if impl[lang] != impl["py"] {
				t.Errorf("%s_%s differs from %s_py in arguments or return:\n %v\n %v", fn, lang, fn, impl[lang], impl["py"])
			}
		}
		if !tested[fn] {
			t.Errorf("%s has no case in fidelityCases", fn)
		}
		delete(tested, fn)
	}
	for fn := range tested {
		t.Errorf("fidelityCases names %s, which the program lacks", fn)
	}
}

// stripDesc returns a return object without its desc, compact.
func stripDesc(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	delete(v, "desc")
	out, _ := json.Marshal(v)
	return string(out)
}

// The three languages' tools have the same schemas: a client sees one
// interface whatever language implements it.
func TestFidelityToolsAlike(t *testing.T) {
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(mcpTools(t, program("fidelity")), &list); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tool := range list.Tools {
		i := strings.LastIndexByte(tool.Name, '_')
		fn, lang := tool.Name[:i], tool.Name[i+1:]
		if recordReturns[fn] != (tool.OutputSchema != nil) {
			t.Errorf("%s: outputSchema %s, want one exactly for a record return", tool.Name, tool.OutputSchema)
		}
		// Property descriptions are shared; the tool's description names the language.
		s := string(tool.InputSchema) + " -> " + string(tool.OutputSchema)
		if lang == "py" {
			schemas[fn] = s
		}
	}
	for _, tool := range list.Tools {
		i := strings.LastIndexByte(tool.Name, '_')
		fn := tool.Name[:i]
		if s := string(tool.InputSchema) + " -> " + string(tool.OutputSchema); s != schemas[fn] {
			t.Errorf("%s: schemas %s\n differ from %s_py: %s", tool.Name, s, fn, schemas[fn])
		}
	}
	if len(list.Tools) != 3*len(schemas) {
		t.Errorf("%d tools for %d functions, want three each", len(list.Tools), len(schemas))
	}
}
