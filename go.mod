module github.com/restmcp/restmcp

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	gopkg.in/yaml.v3 v3.0.1
)
