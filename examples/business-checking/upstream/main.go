// Command upstream serves the business-checking example's demo API on
// 127.0.0.1:9912 (or the address given as the first argument).
package main

import "github.com/restmcp/restmcp/examples"

func main() {
	examples.ServeDemo("127.0.0.1:9912", "business-checking demo API on http://%s/v2", examples.NewBusinessCheckingUpstream())
}
