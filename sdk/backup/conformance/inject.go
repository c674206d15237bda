package conformance

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// faults wraps a driver's client: the first Create of each Go type is
// carried out and then answered 409 Conflict (a lost response: the retry
// meets AlreadyExists for an object that is the run's own), and the first
// Update, Patch and status write are refused with 409 Conflict without
// being carried out.
type faults struct {
	mu       sync.Mutex
	seen     map[string]bool
	injected map[string]int
}

func newFaults() *faults { return &faults{seen: map[string]bool{}, injected: map[string]int{}} }

// first reports whether key is seen for the first time, counting an
// injection under op.
func (f *faults) first(op, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen[key] {
		return false
	}
	f.seen[key] = true
	f.injected[op]++
	return true
}

func (f *faults) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected[op]
}

func (f *faults) wrap(c client.Client) client.Client { return &faultyClient{Client: c, f: f} }

func conflict(obj client.Object) error {
	return apierrors.NewConflict(schema.GroupResource{Resource: fmt.Sprintf("%T", obj)}, obj.GetName(),
		fmt.Errorf("injected by the conformance suite"))
}

type faultyClient struct {
	client.Client
	f *faults
}

func (c *faultyClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if c.f.first("create", fmt.Sprintf("create %T", obj)) {
		if err := c.Client.Create(ctx, obj, opts...); err != nil {
			return err
		}
		return conflict(obj)
	}
	return c.Client.Create(ctx, obj, opts...)
}

func (c *faultyClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if c.f.first("update", "update") {
		return conflict(obj)
	}
	return c.Client.Update(ctx, obj, opts...)
}

func (c *faultyClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if c.f.first("patch", "patch") {
		return conflict(obj)
	}
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *faultyClient) SubResource(sub string) client.SubResourceClient {
	return &faultySubResource{SubResourceClient: c.Client.SubResource(sub), f: c.f, sub: sub}
}

type faultySubResource struct {
	client.SubResourceClient
	f   *faults
	sub string
}

func (s *faultySubResource) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if s.f.first("status", s.sub+" apply") {
		return apierrors.NewConflict(schema.GroupResource{Resource: s.sub}, "", fmt.Errorf("injected by the conformance suite"))
	}
	return s.SubResourceClient.Apply(ctx, obj, opts...)
}

func (s *faultySubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if s.f.first("status", s.sub+" update") {
		return conflict(obj)
	}
	return s.SubResourceClient.Update(ctx, obj, opts...)
}

func (s *faultySubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if s.f.first("status", s.sub+" patch") {
		return conflict(obj)
	}
	return s.SubResourceClient.Patch(ctx, obj, patch, opts...)
}
