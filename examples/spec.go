package examples

import _ "embed"

//go:embed finance-data/openapi.yaml
var demoSpec []byte

// DemoSpecPath is the path under which [NewDemoUpstream] serves [DemoSpec].
const DemoSpecPath = "/openapi.yaml"

// DemoBasePath is the path of the demo API's routes on [NewDemoUpstream]; it
// matches the path of the document's server, https://api.finance.example/v1,
// so an upstream override of "http://host:port" reaches them.
const DemoBasePath = "/v1"

// DemoSpec returns the demo finance API's OpenAPI 3.1 document (YAML). Each
// call returns a fresh copy, which the caller may modify.
func DemoSpec() []byte {
	return append([]byte(nil), demoSpec...)
}
