package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// setupTracing builds the OpenTelemetry tracer provider from the standard
// OTEL_* environment variables
// (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/),
// or returns nil (tracing off, the default). Tracing is on when
// OTEL_TRACES_EXPORTER is otlp, or unset with an OTLP endpoint
// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT plus
// /v1/traces); OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it
// off. Spans go over OTLP/HTTP with protobuf, in batches; the service name
// is OTEL_SERVICE_NAME or restmcp. The returned function flushes and stops
// the exporter.
func setupTracing(ctx context.Context, getenv func(string) string, logger *slog.Logger) (trace.TracerProvider, func(context.Context) error, error) {
	off := func(context.Context) error { return nil }
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if endpoint == "" {
		if base := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); base != "" {
			endpoint = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
	}
	switch {
	case strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"), exporter == "none":
		return nil, off, nil
	case exporter == "" && endpoint == "":
		return nil, off, nil
	case exporter != "" && exporter != "otlp":
		return nil, off, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: restmcp exports traces over OTLP only (otlp or none)", exporter)
	}
	if p := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") + getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && !strings.HasPrefix(p, "http/protobuf") {
		return nil, off, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: restmcp exports traces over http/protobuf", p)
	}
	var opts []otlptracehttp.Option
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, off, fmt.Errorf("tracing: %w", err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "restmcp"
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(name), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	logger.Info("tracing on", "exporter", "otlp/http", "endpoint", endpoint, "service_name", name)
	return tp, tp.Shutdown, nil
}
