package loopback

import "testing"

func TestHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "[::1]": true,
		"127.example.com": false, "localhost.example": false, "0.0.0.0": false, "::": false, "10.0.0.1": false,
		"example.com": false, "": false, "[::1": true, "::ffff:127.0.0.1": true,
	} {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
