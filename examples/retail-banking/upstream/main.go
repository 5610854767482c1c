// Command upstream serves the retail-banking example's demo API on
// 127.0.0.1:9913 (or the address given as the first argument) and prints a
// demo customer's JWT.
package main

import "github.com/restmcp/restmcp/examples"

func main() {
	examples.ServeDemo("127.0.0.1:9913", "retail-banking demo API on http://%s/api/v3; a customer's JWT: "+examples.RetailBankingToken("cust-17"),
		examples.NewRetailBankingUpstream())
}
