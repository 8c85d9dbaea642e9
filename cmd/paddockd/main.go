// Command paddockd serves Paddock's operations over the network (package
// daemon): one runtime over the providers its environment offers (the
// demo's: local and the fake always, docker when an engine answers, each
// hosted provider whose credentials are set), at one address, for clients
// in any language that speaks Connect, gRPC or gRPC-Web.
//
//	paddockd                                   # 127.0.0.1:8423, no auth (loopback only)
//	paddockd mcp                               # MCP tools over stdin and stdout
//	paddockd -listen :8423 -tls-cert c.pem -tls-key k.pem -tokens-file tokens
//
// Beyond loopback it requires TLS and bearer tokens (a file of tokens, one
// per line, each naming its tenant or none) or client certificates (mutual
// TLS, each certificate's common name its tenant); it refuses to start
// otherwise. A tenant sees only the sandboxes it created. SIGINT or SIGTERM stops it
// gracefully: its streams end, and its sandboxes are left to the
// runtime's leases. It serves MCP tools (package mcptools) at /mcp over
// streamable HTTP, and `paddockd mcp` serves them over stdio for an agent
// that starts it. Every flag has an environment variable (PADDOCKD_ and
// the flag's name in capitals, dashes as underscores), and a configuration
// file (-config) may hold the same settings, NAME=VALUE a line. With -otlp-endpoint
// (or OpenTelemetry's OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
// OTEL_EXPORTER_OTLP_ENDPOINT) it sends traces over OTLP/HTTP: a span per
// request it serves, and the runtime's span per operation.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/paddockhq/paddock"
	"github.com/paddockhq/paddock/actors"
	"github.com/paddockhq/paddock/daemon"
	"github.com/paddockhq/paddock/internal/providers"
	"github.com/paddockhq/paddock/mcptools"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil))
}

// stdio is what `paddockd mcp` speaks MCP over: this process's stdin and
// stdout (tests give their own).
var stdio mcp.Transport = &mcp.StdioTransport{}

// config is what paddockd runs with.
type config struct {
	listen, tlsCert, tlsKey, tokensFile, clientCA, root, logLevel, otlpEndpoint, allowOrigins string
}

// parse reads the flags over their environment variables, over a
// configuration file's settings (-config or PADDOCKD_CONFIG).
func parse(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("paddockd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	path := getenv("PADDOCKD_CONFIG")
	for i, a := range args { // -config is read first: its settings are the other flags' defaults
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "config" && strings.HasPrefix(a, "-") {
			if !hasValue && i+1 < len(args) {
				value = args[i+1]
			}
			path = value
		}
	}
	file, err := readConfig(path)
	if err != nil {
		return c, err
	}
	fs.String("config", path, "a file of PADDOCKD_ settings, NAME=VALUE a line: the defaults of the flags and the environment")
	env := func(name, def string) string {
		key := "PADDOCKD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if v := getenv(key); v != "" {
			return v
		}
		if v, ok := file[key]; ok {
			return v
		}
		return def
	}
	fs.StringVar(&c.listen, "listen", env("listen", "127.0.0.1:8423"), "the address to serve")
	fs.StringVar(&c.tlsCert, "tls-cert", env("tls-cert", ""), "a PEM certificate: serve TLS")
	fs.StringVar(&c.tlsKey, "tls-key", env("tls-key", ""), "the certificate's PEM key")
	fs.StringVar(&c.tokensFile, "tokens-file", env("tokens-file", ""), "bearer tokens, one per line: required beyond loopback")
	fs.StringVar(&c.clientCA, "client-ca", env("client-ca", ""), "a PEM CA: mutual TLS, each client certificate's common name its tenant (instead of tokens)")
	fs.StringVar(&c.root, "root", env("root", ""), "the local provider's directory (default: paddockd under the user's cache directory)")
	fs.StringVar(&c.logLevel, "log-level", env("log-level", "warn"), "debug, info, warn or error")
	fs.StringVar(&c.allowOrigins, "allow-origins", env("allow-origins", ""), "origins whose pages may call paddockd from a browser (gRPC-Web, Connect), comma-separated, or *")
	fs.StringVar(&c.otlpEndpoint, "otlp-endpoint", env("otlp-endpoint", otlpFromEnv(getenv)), "an OTLP/HTTP traces URL (http://collector:4318/v1/traces): send traces there")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for key := range file {
		name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(key, "PADDOCKD_"), "_", "-"))
		if !strings.HasPrefix(key, "PADDOCKD_") || name == "config" || fs.Lookup(name) == nil {
			return c, fmt.Errorf("paddockd: %s: %s is not a setting of paddockd's", path, key)
		}
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("paddockd: -tls-cert and -tls-key go together")
	}
	if c.clientCA != "" && (c.tlsCert == "" || c.tokensFile != "") {
		return c, errors.New("paddockd: -client-ca needs -tls-cert and -tls-key, and replaces -tokens-file")
	}
	if !loopback(c.listen) && (c.tlsCert == "" || (c.tokensFile == "" && c.clientCA == "")) {
		return c, fmt.Errorf("paddockd: %s is beyond loopback: it needs -tls-cert, -tls-key and -tokens-file or -client-ca", c.listen)
	}
	return c, nil
}

// otlpFromEnv is OpenTelemetry's own setting of the traces' endpoint:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, or OTEL_EXPORTER_OTLP_ENDPOINT
// with the traces' path; "" for none.
func otlpFromEnv(getenv func(string) string) string {
	if v := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
		return v
	}
	if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return strings.TrimSuffix(v, "/") + "/v1/traces"
	}
	return ""
}

// tracing is the tracer provider exporting to endpoint over OTLP/HTTP
// (nil, and a stop that does nothing, for no endpoint); its stop sends
// what is left.
func tracing(endpoint string) (trace.TracerProvider, func(), error) {
	if endpoint == "" {
		return nil, func() {}, nil
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("paddockd: -otlp-endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "paddockd"))))
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}, nil
}

// readConfig reads a configuration file ("" for none): a NAME=VALUE line
// per setting, as the environment names them (PADDOCKD_LISTEN=...), blank
// lines and # comments skipped.
func readConfig(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("paddockd: -config: %w", err)
	}
	settings := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("paddockd: %s: line %d: want NAME=VALUE", path, i+1)
		}
		settings[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	return settings, nil
}

// loopback reports whether addr listens on this machine only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readTokens reads a tokens file: a line per token, "TENANT TOKEN" (the
// tenant sees only its own sandboxes) or "TOKEN" alone (it sees every
// sandbox); blank lines and # comments skipped; none is an error.
func readTokens(path string) ([]daemon.Token, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("paddockd: tokens: %w", err)
	}
	var tokens []daemon.Token
	for i, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "#"):
		case len(fields) == 1:
			tokens = append(tokens, daemon.Token{Secret: paddock.NewSecret(fields[0])})
		case len(fields) == 2:
			tokens = append(tokens, daemon.Token{Tenant: fields[0], Secret: paddock.NewSecret(fields[1])})
		default:
			return nil, fmt.Errorf("paddockd: tokens: line %d: want TOKEN or TENANT TOKEN", i+1)
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("paddockd: the tokens file holds no token")
	}
	return tokens, nil
}

// run serves until ctx ends; ready, if set, is told the address once it
// listens. It returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(addr string)) int {
	overStdio := len(args) > 0 && args[0] == "mcp"
	if overStdio {
		args = args[1:]
	}
	c, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	level, err := zerolog.ParseLevel(c.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "paddockd: -log-level:", err)
		return 2
	}
	log := zerolog.New(stderr).Level(level).With().Timestamp().Str("component", "paddockd").Logger()
	var tokens []daemon.Token
	if c.tokensFile != "" {
		if tokens, err = readTokens(c.tokensFile); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	if c.root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		c.root = filepath.Join(cache, "paddockd")
	}
	if err := os.MkdirAll(c.root, 0o700); err != nil {
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	tracer, stopTracing, err := tracing(c.otlpEndpoint)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer stopTracing() // after the runtime and the server stopped (defers run last first)
	metrics := prometheus.NewRegistry()
	reg, closeReg, err := providers.Registry(c.root, log, getenv, metrics)
	if err != nil {
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	defer closeReg()
	host, _ := os.Hostname()
	rt, err := actors.Start(actors.Config{Adapters: reg, Logger: log, Metrics: metrics, Tracer: tracer, Identity: "paddockd@" + host})
	if err != nil {
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(sctx)
	}()
	tools, started := mcptools.NewServer(mcptools.Config{Transport: rt.Transport(), Version: "paddockd"})
	defer started.Close() // before the runtime stops (defers run last first)
	if overStdio {
		if err := tools.Run(ctx, stdio); err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "paddockd mcp:", err)
			return 1
		}
		return 0
	}
	srv, err := daemon.New(daemon.Config{Transport: rt.Transport(), Logger: log})
	if err != nil {
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	var service http.Handler = srv
	// The MCP tools see every sandbox: a tenant's token is refused there.
	var agents http.Handler = untenanted(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return tools }, nil))
	if tokens != nil {
		if service, err = daemon.RequireTokens(tokens, srv); err != nil {
			fmt.Fprintln(stderr, "paddockd:", err)
			return 2
		}
		agents, _ = daemon.RequireTokens(tokens, agents)
	}
	var tlsConfig *tls.Config
	if c.clientCA != "" {
		pem, err := os.ReadFile(c.clientCA)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			fmt.Fprintln(stderr, "paddockd: -client-ca: no PEM certificate in", c.clientCA)
			return 2
		}
		tlsConfig = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12}
		service = daemon.RequireClientCertificates(srv)
		agents = daemon.RequireClientCertificates(agents) // a tenant's: refused there
	}
	mux := http.NewServeMux()
	if c.allowOrigins != "" { // before the guard: a browser's preflight carries no token
		service = daemon.AllowOrigins(strings.Split(strings.ReplaceAll(c.allowOrigins, " ", ""), ","), service)
	}
	if tracer != nil { // a span per request, its parent the caller's (W3C traceparent)
		service = otelhttp.NewHandler(service, "paddockd", otelhttp.WithTracerProvider(tracer),
			otelhttp.WithPropagators(propagation.TraceContext{}),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.URL.Path }))
	}
	mux.Handle(daemon.ServicePath, service)
	mux.Handle(grpchealth.NewHandler(grpchealth.NewStaticChecker(daemon.ServiceName)))
	reflector := grpcreflect.NewStaticReflector(daemon.ServiceName)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	mux.Handle("/mcp", agents)
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, Protocols: new(http.Protocols), HTTP2: daemon.HTTP2Config(), TLSConfig: tlsConfig}
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetHTTP2(true)
	hs.Protocols.SetUnencryptedHTTP2(c.tlsCert == "") // h2c on loopback: WriteFile is a client stream
	served := make(chan error, 1)
	go func() {
		if c.tlsCert != "" {
			served <- hs.ServeTLS(ln, c.tlsCert, c.tlsKey)
			return
		}
		served <- hs.Serve(ln)
	}()
	log.Info().Str("address", ln.Addr().String()).Bool("tls", c.tlsCert != "").Bool("tokens", tokens != nil).Msg("serving")
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintln(stderr, "paddockd:", err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx) // streams end; sandboxes are left to their leases
	<-served
	return 0
}

// untenanted refuses a tenant's request (403): next sees every sandbox.
func untenanted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if daemon.TenantOf(r.Context()) != "" {
			http.Error(w, "paddockd: the MCP tools are not offered to a tenant's token", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
