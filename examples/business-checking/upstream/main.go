// Command upstream serves the business-checking example's demo API on
// 127.0.0.1:9912 (or the address given as the first argument).
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/restmcp/restmcp/examples"
)

func main() {
	addr := "127.0.0.1:9912"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	log.Printf("business-checking demo API on http://%s/v2", addr)
	srv := &http.Server{Addr: addr, Handler: examples.NewBusinessCheckingUpstream(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
