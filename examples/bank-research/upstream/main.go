// Command upstream serves the bank-research example's demo API on
// 127.0.0.1:9911 (or the address given as the first argument).
package main

import "github.com/restmcp/restmcp/examples"

func main() {
	examples.ServeDemo("127.0.0.1:9911", "bank-research demo API on http://%s/v1", examples.NewBankResearchUpstream())
}
