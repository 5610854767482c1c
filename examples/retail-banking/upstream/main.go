// Command upstream serves the retail-banking example's demo API on
// 127.0.0.1:9913 (or the address given as the first argument) and prints a
// demo customer's JWT.
package main

import (
	"log"
	"net/http"
	"os"
	"time"

	"github.com/restmcp/restmcp/examples"
)

func main() {
	addr := "127.0.0.1:9913"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	log.Printf("retail-banking demo API on http://%s/api/v3; a customer's JWT: %s", addr, examples.RetailBankingToken("cust-17"))
	srv := &http.Server{Addr: addr, Handler: examples.NewRetailBankingUpstream(), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
