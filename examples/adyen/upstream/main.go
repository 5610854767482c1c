// Command upstream serves stand-ins for the adyen example's three APIs:
// Checkout on 127.0.0.1:9921, Transfers on 127.0.0.1:9922 and the
// Configuration (balance platform) API on 127.0.0.1:9923, each accepting
// the demo key adyen-demo-key in X-API-Key and echoing each request.
package main

import (
	"log"
	"net/http"
	"time"

	"github.com/restmcp/restmcp/examples"
)

func main() {
	apis := []struct{ name, addr string }{
		{"checkout", "127.0.0.1:9921"},
		{"transfers", "127.0.0.1:9922"},
		{"balance_platform", "127.0.0.1:9923"},
	}
	errc := make(chan error, len(apis))
	for _, a := range apis {
		log.Printf("adyen %s stand-in on http://%s (X-API-Key: %s)", a.name, a.addr, examples.AdyenDemoKey)
		srv := &http.Server{Addr: a.addr, Handler: examples.NewAdyenStub(a.name), ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- srv.ListenAndServe() }()
	}
	log.Fatal(<-errc)
}
