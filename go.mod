module github.com/restmcp/restmcp

go 1.26.8
