package server

import "testing"

// The scanning parseRequest must answer exactly as the full decode does.
func checkParseRequest(t *testing.T, raw string) {
	t.Helper()
	op, failure := parseRequest([]byte(raw))
	wantOp, wantFailure := parseRequestSlowly([]byte(raw))
	if op != wantOp || (failure == nil) != (wantFailure == nil) ||
		(failure != nil && (failure.Code != wantFailure.Code || failure.Message != wantFailure.Message)) {
		t.Fatalf("parseRequest(%q) = %q, %v; full decode gives %q, %v", raw, op, failure, wantOp, wantFailure)
	}
}

func TestParseRequestMatchesFullDecode(t *testing.T) {
	cases := []string{
		`{"op":"lstat","path":"/tmp"}`,
		`{"path":"/tmp","op":"lstat"}`,
		` { "op" : "lstat" , "path" : "/x" } `,
		`{}`, `{ }`, `{"path":"/"}`, `{"op":42}`, `{"op":-1.5e3}`, `{"op":null}`, `{"op":true}`, `{"op":[1,"a"]}`,
		`{"op":{"a":"}"}}`, `{"op":""}`, `{"op":"a\"b"}`, `{"op":"\u006cstat"}`, `{"o\u0070":"lstat"}`,
		`{"op":"first","op":"second"}`, `{"op":"x","a":{"op":"y"}}`, `{"a":["op",{"op":1}],"op":"z"}`,
		`{"a":"\\","op":"w"}`, `{"a":"\"op\":1","op":"v"}`, "{\"op\":\"\xff\xfe\"}", `{"op":"é"}`,
		`{"OP":"lstat"}`, `{"op":"echo"`, `null`, `[1,2]`, `"echo"`, `{"op":"echo"} x`, ``, `{"op":"a"}{`,
		"{\"op\":\"x\",\n\t\"n\":[1,2,{\"k\":[]}],\"b\":false}",
	}
	for _, raw := range cases {
		checkParseRequest(t, raw)
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{`{"op":"lstat","path":"/tmp"}`, `{"a":[{"op":1}],"op":"x"}`, `{"o\u0070":1}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkParseRequest(t, raw) })
}
