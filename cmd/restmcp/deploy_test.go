package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/openapi"
)

// TestKubernetesManifest renders deploy/kubernetes/restmcp.yaml: every
// document parses; there are a ConfigMap, a Secret, a Deployment of three
// replicas probing /ready and /health and a Service; every environment
// variable the Deployment and the Secret set is a restmcp setting; the
// ConfigMap's config file loads with those variables (so it names only
// settings that exist and holds valid values); and its OpenAPI document
// loads.
func TestKubernetesManifest(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "kubernetes", "restmcp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type envVar struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	}
	type object struct {
		Kind       string            `yaml:"kind"`
		Data       map[string]string `yaml:"data"`
		StringData map[string]string `yaml:"stringData"`
		Spec       struct {
			Replicas int `yaml:"replicas"`
			Template struct {
				Spec struct {
					Containers []struct {
						Env            []envVar `yaml:"env"`
						ReadinessProbe struct {
							HTTPGet struct{ Path string } `yaml:"httpGet"`
						} `yaml:"readinessProbe"`
						LivenessProbe struct {
							HTTPGet struct{ Path string } `yaml:"httpGet"`
						} `yaml:"livenessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	byKind := map[string]object{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var o object
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("manifest does not parse: %v", err)
		}
		byKind[o.Kind] = o
	}
	for _, k := range []string{"ConfigMap", "Secret", "Deployment", "Service"} {
		if _, ok := byKind[k]; !ok {
			t.Errorf("no %s", k)
		}
	}
	dep := byKind["Deployment"]
	if dep.Spec.Replicas != 3 || len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment: %d replicas, %d containers", dep.Spec.Replicas, len(dep.Spec.Template.Spec.Containers))
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe.HTTPGet.Path != "/ready" || c.LivenessProbe.HTTPGet.Path != "/health" {
		t.Errorf("probes: readiness %q, liveness %q", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}

	known := map[string]bool{config.EnvConfig: true}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	dir := t.TempDir()
	env := map[string]string{}
	for _, e := range c.Env {
		if !known[e.Name] {
			t.Errorf("the Deployment sets %s, which is not a restmcp setting", e.Name)
		}
		env[e.Name] = e.Value
	}
	for name := range byKind["Secret"].StringData {
		if !known[name] {
			t.Errorf("the Secret holds %s, which is not a restmcp setting", name)
		}
	}
	// The ConfigMap as the volume mounts it, in place of /etc/restmcp.
	for name, content := range byKind["ConfigMap"].Data {
		content = strings.ReplaceAll(content, "/etc/restmcp/", dir+"/")
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env[config.EnvConfig] = filepath.Join(dir, "restmcp.yaml")
	env["RESTMCP_REDIS_URL"] = "redis://:pw@redis:6379/0"
	env["RESTMCP_OAUTH_ENCRYPTION_KEY"] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	cfg, err := config.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the ConfigMap's config does not load: %v", err)
	}
	if !cfg.OAuth || cfg.Addr != "0.0.0.0:8080" || cfg.PublicURL != "https://mcp.example.com/mcp" {
		t.Errorf("config: oauth %v, addr %s, public_url %s", cfg.OAuth, cfg.Addr, cfg.PublicURL)
	}
	if _, err := openapi.Load(context.Background(), cfg.Spec, openapi.LoadOptions{Upstream: cfg.Upstream}); err != nil {
		t.Errorf("the ConfigMap's document does not load: %v", err)
	}
}
