package daemon

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/paddockhq/paddock/messages"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Tenants: each token of RequireTokens may name a tenant, and a tenant
// sees only the sandboxes it created. Its sandbox names are namespaced at
// the provider (tenant "acme" naming "box" makes "acme-box"): requests
// gain the prefix, replies lose it, listings show only its own, and a
// command's controls reach only the commands its own streams opened. A
// token without a tenant sees every sandbox under its own name.

// tenantName is what a tenant may be called: no dash, so that a prefix
// cannot be mistaken for another tenant's.
var tenantName = regexp.MustCompile(`^[a-z0-9]{1,32}$`)

type tenantKey struct{}

// withTenant marks ctx as a request of tenant ("" for none).
func withTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// tenantOf is the tenant of a request ("" for none).
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// The messages whose name fields are sandbox names.
var (
	handleName  = (&messages.Handle{}).ProtoReflect().Descriptor()
	infoName    = (&messages.Info{}).ProtoReflect().Descriptor()
	failureName = (&messages.Failure{}).ProtoReflect().Descriptor()
	namedTop    = map[protoreflect.FullName]bool{
		(&messages.CreateRequest{}).ProtoReflect().Descriptor().FullName():    true,
		(&messages.CreateNewRequest{}).ProtoReflect().Descriptor().FullName(): true,
		(&messages.ForkRequest{}).ProtoReflect().Descriptor().FullName():      true,
	}
)

// scopeNames rewrites every sandbox name in m with f: a handle's, an
// info's, a failure's, and a creation's or fork's own name.
func scopeNames(m protoreflect.Message, f func(string) string) {
	d := m.Descriptor()
	if d == handleName || d == infoName || d == failureName || namedTop[d.FullName()] {
		if fd := d.Fields().ByName("name"); fd != nil && m.Has(fd) {
			m.Set(fd, protoreflect.ValueOfString(f(m.Get(fd).String())))
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.Kind() != protoreflect.MessageKind:
		case fd.IsList():
			for i := range v.List().Len() {
				scopeNames(v.List().Get(i).Message(), f)
			}
		case !fd.IsMap():
			scopeNames(v.Message(), f)
		}
		return true
	})
}

// scopeRequest puts the tenant's prefix on every sandbox name of q.
func scopeRequest(q proto.Message, tenant string) {
	if tenant != "" {
		scopeNames(q.ProtoReflect(), func(n string) string { return tenant + "-" + n })
	}
}

// scopeReply takes the tenant's prefix off every sandbox name of r; a
// listing keeps only the tenant's own.
func scopeReply(r proto.Message, tenant string) {
	if tenant == "" || r == nil {
		return
	}
	prefix := tenant + "-"
	scopeNames(r.ProtoReflect(), func(n string) string { return strings.TrimPrefix(n, prefix) })
	if l, ok := r.(*messages.ListReply); ok {
		own := l.Names[:0]
		for _, n := range l.GetNames() {
			if rest, ok := strings.CutPrefix(n, prefix); ok {
				own = append(own, rest)
			}
		}
		l.Names = own
	}
}

// commands are the live commands each tenant's streams opened: a control
// of another's command (or of one whose stream ended) is answered as for
// a command that exited.
type commands struct {
	mu    sync.Mutex
	owner map[string]string // command ref -> tenant
}

func (c *commands) open(ref, tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.owner == nil {
		c.owner = map[string]string{}
	}
	c.owner[ref] = tenant
}

func (c *commands) close(ref string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owner, ref)
}

func (c *commands) owns(ref, tenant string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner[ref] == tenant
}

// TenantOf is the tenant RequireTokens found for a request ("" for a
// token without one, or no token check).
func TenantOf(ctx context.Context) string { return tenantOf(ctx) }
