// Command upstream serves the bank-research example's demo API on
// 127.0.0.1:9911 (or the address given as the first argument).
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/restmcp/restmcp/examples"
)

func main() {
	addr := "127.0.0.1:9911"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	log.Printf("bank-research demo API on http://%s/v1", addr)
	srv := &http.Server{Addr: addr, Handler: examples.NewBankResearchUpstream(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
