package examples

import (
	"log"
	"net/http"
	"os"
	"time"
)

// ServeDemo serves h, a demo API of one of the examples, on addr (or the
// address given as the program's first argument) until the process ends,
// after logging where: the body of each example's upstream command. what
// is one line naming the API; %s in it is replaced by the address.
func ServeDemo(addr, what string, h http.Handler) {
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	log.Printf(what, addr)
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
