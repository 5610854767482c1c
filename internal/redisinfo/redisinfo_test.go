package redisinfo

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// An INFO cpu commandstats reply as Redis 7.0 writes it (CRLF lines).
const sample = "# CPU\r\nused_cpu_sys:1.250000\r\nused_cpu_user:3.500250\r\nused_cpu_sys_children:0.000000\r\n" +
	"used_cpu_user_children:0.000000\r\n\r\n# Commandstats\r\n" +
	"cmdstat_evalsha:calls=100,usec=2400,usec_per_call=24.00,rejected_calls=0,failed_calls=1\r\n" +
	"cmdstat_config|resetstat:calls=1,usec=650,usec_per_call=650.00,rejected_calls=0,failed_calls=0\r\n" +
	"cmdstat_xadd:calls=98,usec=490,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n"

func TestParseAndSub(t *testing.T) {
	u, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU != 4750250*time.Microsecond {
		t.Errorf("CPU = %v, want 4.75025s", u.CPU)
	}
	if want := map[string]int64{"evalsha": 100, "config|resetstat": 1, "xadd": 98}; !maps.Equal(u.Calls, want) {
		t.Errorf("Calls = %v, want %v", u.Calls, want)
	}
	if want := map[string]int64{"evalsha": 2400, "config|resetstat": 650, "xadd": 490}; !maps.Equal(u.Usec, want) {
		t.Errorf("Usec = %v, want %v", u.Usec, want)
	}
	later, err := Parse(strings.NewReplacer("used_cpu_user:3.500250", "used_cpu_user:3.600250",
		"calls=100,usec=2400", "calls=150,usec=3600").Replace(sample))
	if err != nil {
		t.Fatal(err)
	}
	d := later.Sub(u)
	if d.CPU != 100*time.Millisecond || !maps.Equal(d.Calls, map[string]int64{"evalsha": 50}) || !maps.Equal(d.Usec, map[string]int64{"evalsha": 1200}) {
		t.Errorf("Sub = %+v, want 100ms, evalsha 50 calls, 1200 µs", d)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ info, want string }{
		{"# Commandstats\r\ncmdstat_get:calls=1,usec=1\r\n", "INFO cpu: no used_cpu_user and used_cpu_sys"},
		{"used_cpu_sys:x\r\nused_cpu_user:1\r\n", `INFO cpu: used_cpu_sys: strconv.ParseFloat: parsing "x": invalid syntax`},
		{"used_cpu_sys:1\r\nused_cpu_user:1\r\ncmdstat_get:calls=a,usec=1\r\n", `INFO commandstats: get calls: strconv.ParseInt: parsing "a": invalid syntax`},
	} {
		if _, err := Parse(tc.info); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want an error starting %q", tc.info, err, tc.want)
		}
	}
}
