package examples_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/restmcp/restmcp/examples"
)

// The demo upstream is an ordinary http.Handler: run it on a test server and
// point restmcp's upstream override (or any HTTP client) at it.
func ExampleNewDemoUpstream() {
	srv := httptest.NewServer(examples.NewDemoUpstream(nil))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/v1/fx/rates?base=EUR&symbols=USD,JPY", nil)
	req.Header.Set("x-api-key", "k-123")
	resp, err := srv.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status)
	fmt.Print(string(body))
	// Output:
	// 200 OK
	// {"base":"EUR","date":"2025-06-30","rates":{"JPY":170.83,"USD":1.08519}}
}
