package adapter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/openapi"
)

// retrievalTasks are natural-language tasks written for three large
// documents of the corpus, each with the operation that does it (or, where
// the API has two that do, both, separated by "|").
var retrievalTasks = []struct{ folder, task, want string }{
	{"kubernetes-1.36-swagger20", "list the pods in namespace default", "list_core_v_1_namespaced_pod"},
	{"kubernetes-1.36-swagger20", "read the logs of a pod", "read_core_v_1_namespaced_pod_log"},
	{"kubernetes-1.36-swagger20", "create a deployment in a namespace", "create_apps_v_1_namespaced_deployment"},
	{"kubernetes-1.36-swagger20", "delete a pod", "delete_core_v_1_namespaced_pod"},
	{"kubernetes-1.36-swagger20", "scale a deployment to more replicas", "patch_apps_v_1_namespaced_deployment_scale"},
	{"kubernetes-1.36-swagger20", "list all nodes of the cluster", "list_core_v_1_node"},
	{"kubernetes-1.36-swagger20", "create a service in a namespace", "create_core_v_1_namespaced_service"},
	{"kubernetes-1.36-swagger20", "get a config map", "read_core_v_1_namespaced_config_map"},
	{"kubernetes-1.36-swagger20", "list the namespaces", "list_core_v_1_namespace"},
	{"kubernetes-1.36-swagger20", "read a secret in a namespace", "read_core_v_1_namespaced_secret"},
	{"github-rest-v1.1.3", "create an issue in a repository", "issues_create"},
	{"github-rest-v1.1.3", "list the issues of a repository", "issues_list_for_repo"},
	{"github-rest-v1.1.3", "open a pull request", "pulls_create"},
	{"github-rest-v1.1.3", "merge a pull request", "pulls_merge"},
	{"github-rest-v1.1.3", "get the authenticated user", "users_get_authenticated"},
	{"github-rest-v1.1.3", "search repositories", "search_repos"},
	{"github-rest-v1.1.3", "fork a repository", "repos_create_fork"},
	{"github-rest-v1.1.3", "comment on an issue", "issues_create_comment"},
	{"github-rest-v1.1.3", "list the branches of a repository", "repos_list_branches"},
	{"github-rest-v1.1.3", "create a release", "repos_create_release"},
	{"stripe-2022-04-12", "create a customer", "post_customers"},
	{"stripe-2022-04-12", "retrieve a customer", "get_customers_customer"},
	{"stripe-2022-04-12", "create a payment intent", "post_payment_intents"},
	{"stripe-2022-04-12", "refund a charge", "post_refunds|post_charges_charge_refund"},
	{"stripe-2022-04-12", "get the account balance", "get_balance"},
	{"stripe-2022-04-12", "list all invoices", "get_invoices"},
	{"stripe-2022-04-12", "create a subscription for a customer", "post_subscriptions|post_customers_customer_subscriptions"},
	{"stripe-2022-04-12", "cancel a subscription", "delete_subscriptions_subscription_exposed_id"},
	{"stripe-2022-04-12", "create a checkout session", "post_checkout_sessions"},
	{"stripe-2022-04-12", "confirm a payment intent", "post_payment_intents_intent_confirm"},
}

// TestCompactRetrieval ranks the right operation for each task among the
// operations of its document with search_operations' index, and needs it
// in the top 3 for at least 27 of the 30 tasks. The table of ranks is
// logged.
func TestCompactRetrieval(t *testing.T) {
	corpustest.Require(t)
	indexes := map[string]*compactTools{}
	top3 := 0
	var table strings.Builder
	table.WriteString("| document | task | operation | rank |\n|---|---|---|---|\n")
	for _, task := range retrievalTasks {
		c := indexes[task.folder]
		if c == nil {
			doc, err := openapi.Load(context.Background(), corpustest.Path(t, task.folder), openapi.LoadOptions{Lenient: true, RelativeServers: true})
			if err != nil {
				t.Fatal(err)
			}
			tools := map[string]*openapi.Tool{}
			for _, tl := range doc.Tools {
				tools[tl.Name] = tl
			}
			for _, w := range strings.Split(task.want, "|") {
				if tools[w] == nil {
					t.Fatalf("%s has no operation %s", task.folder, w)
				}
			}
			start := time.Now()
			c = newCompactTools(tools)
			t.Logf("%s: %d operations indexed in %v", task.folder, len(tools), time.Since(start).Round(time.Millisecond))
			indexes[task.folder] = c
		}
		rank := 0
		for i, h := range c.index.Search(task.task, nil, 0) {
			if slices.Contains(strings.Split(task.want, "|"), c.ops[h.Doc].Name) {
				rank = i + 1
				break
			}
		}
		if rank >= 1 && rank <= 3 {
			top3++
		} else if testing.Verbose() {
			for i, h := range c.index.Search(task.task, nil, 5) {
				t.Logf("  %q #%d %s %.2f", task.task, i+1, c.ops[h.Doc].Name, h.Score)
			}
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %d |\n", task.folder, task.task, task.want, rank)
	}
	t.Logf("retrieval: %d of %d tasks have their operation in the top 3\n%s", top3, len(retrievalTasks), table.String())
	if top3 < 27 {
		t.Errorf("%d of %d tasks in the top 3, want at least 27", top3, len(retrievalTasks))
	}
}
