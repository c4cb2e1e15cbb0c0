package execop

import (
	"testing"
	"time"

	"github.com/outpost-dev/outpost/agent-go/internal/proto"
)

// timeoutMs becomes the command's timeout as a Node timer takes a delay: below 1 ms waits 1 ms, fractions above
// are kept, and a delay beyond what a Duration holds is capped (never overflowing into the past). Killed mutant:
// `ms > 1` negated, which made every timeout above 1 ms a 1 ms one (`ms >= 1` is equivalent: 1 ms either way).
func TestTimeoutFromMilliseconds(t *testing.T) {
	cases := []struct {
		ms   string
		want time.Duration
	}{
		{"0.001", time.Millisecond},
		{"0.5", time.Millisecond},
		{"1", time.Millisecond},
		{"1.5", 1500 * time.Microsecond},
		{"250", 250 * time.Millisecond},
		{"1e300", 1 << 62}, // float64(math.MaxInt64/2), rounded to the nearest float64
	}
	for _, c := range cases {
		call := &proto.Call{Op: "exec", Args: []byte(`{"command":"true","cwd":"/","timeoutMs":` + c.ms + `}`)}
		req, fail := parseRequest(call)
		if fail != nil {
			t.Fatalf("timeoutMs %s: %v", c.ms, fail)
		}
		if req.timeout != c.want {
			t.Errorf("timeoutMs %s: timeout %v; want %v", c.ms, req.timeout, c.want)
		}
	}
}
