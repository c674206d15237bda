package drivers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	backupsv1alpha1 "cozystack.io/sdk/backup/api/v1alpha1"
)

// CoreProtocolVersions are the driver protocol versions this core speaks,
// newest first.
var CoreProtocolVersions = []string{backupsv1alpha1.ProtocolVersion}

// Handoff is one strategy kind a platform release handed to a catalog.
type Handoff struct {
	StrategyKind string `json:"strategyKind"`
	Catalog      string `json:"catalog"`
	MinVersion   string `json:"minVersion"`
}

// Resolution is the outcome of Resolve: a driver to bind to (Reason
// ReasonBound, Driver and ProtocolVersion set), or the DriverBound reason
// why none (one of backupsv1alpha1.BinderReasons) with a message a person
// can act on. Terminal is true for ReasonUnknownStrategyKind.
type Resolution struct {
	Reason          string
	Message         string
	Driver          *backupsv1alpha1.BackupDriver
	ProtocolVersion string
	Terminal        bool
}

// Live reports whether lease was renewed within its duration at now. A
// Lease without renewTime or duration is not live.
func Live(lease *coordinationv1.Lease, now time.Time) bool {
	if lease == nil || lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return false
	}
	d := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	return now.Before(lease.Spec.RenewTime.Add(d))
}

// Resolver resolves strategy kinds against the registrations in a
// cluster, reading through Reader (a cache or a live client).
type Resolver struct {
	Reader client.Reader
	// Handoff is the platform's handoff list.
	Handoff []Handoff
	// Protocols are the core's protocol versions; nil means
	// CoreProtocolVersions.
	Protocols []string
	// BuiltIn maps the strategy kinds the platform's own drivers serve to
	// their driver names (e.g. Job → job). Such a kind is never unknown:
	// before its driver first registers (cozystack-controller starting)
	// a job waits with DriverUnavailable instead of failing.
	BuiltIn map[string]string
}

// Resolve finds the one live registration serving strategyKind at now,
// per contract k7's binding table. Errors are the Reader's.
func (r *Resolver) Resolve(ctx context.Context, strategyKind string, now time.Time) (Resolution, error) {
	var list backupsv1alpha1.BackupDriverList
	if err := r.Reader.List(ctx, &list); err != nil {
		return Resolution{}, err
	}
	var serving, live []*backupsv1alpha1.BackupDriver
	var refused []string
	for i := range list.Items {
		d := &list.Items[i]
		if !d.Serves(strategyKind) || d.DeletionTimestamp != nil {
			continue
		}
		// A refused registration is never bound to (contract k7,
		// "Registration"), however live its Lease.
		a, err := r.Accept(ctx, d)
		if err != nil {
			return Resolution{}, err
		}
		if a.Accepted() {
			a = r.handedOff(a, d, strategyKind)
		}
		if !a.Accepted() {
			refused = append(refused, a.Reason+": "+a.Message)
			continue
		}
		serving = append(serving, d)
		ok, err := r.live(ctx, d, now)
		if err != nil {
			return Resolution{}, err
		}
		if ok {
			live = append(live, d)
		}
	}
	switch {
	case len(serving) == 0 && len(refused) > 0:
		slices.Sort(refused)
		return Resolution{Reason: backupsv1alpha1.ReasonDriverUnavailable, Message: fmt.Sprintf(
			"no accepted BackupDriver serves strategy kind %s (refused: %s); the job waits",
			strategyKind, strings.Join(refused, "; "))}, nil
	case len(serving) == 0:
		for _, h := range r.Handoff {
			if h.StrategyKind == strategyKind {
				return Resolution{Reason: backupsv1alpha1.ReasonDriverNotInstalled, Message: fmt.Sprintf(
					"strategy kind %s is served by the catalog %s from version %s on: install it (a PackageSource for %s >= %s); the job waits",
					strategyKind, h.Catalog, h.MinVersion, h.Catalog, h.MinVersion)}, nil
			}
		}
		if name, ok := r.BuiltIn[strategyKind]; ok {
			return Resolution{Reason: backupsv1alpha1.ReasonDriverUnavailable, Message: fmt.Sprintf(
				"strategy kind %s is served by the platform's built-in driver %s, which has not registered: it starts with cozystack-controller (--controllers backup-job-driver); the job waits",
				strategyKind, name)}, nil
		}
		return Resolution{Reason: backupsv1alpha1.ReasonUnknownStrategyKind, Terminal: true, Message: fmt.Sprintf(
			"no BackupDriver serves strategy kind %s and no catalog took it over: fix the BackupClass's strategy kind or install the driver that serves it",
			strategyKind)}, nil
	case len(live) == 0:
		return Resolution{Reason: backupsv1alpha1.ReasonDriverUnavailable, Message: fmt.Sprintf(
			"BackupDriver %s serves strategy kind %s but its Lease %s/%s is not renewed: the driver is not running; the job waits",
			driverNames(serving), strategyKind, serving[0].Spec.Lease.Namespace, serving[0].Spec.Lease.Name)}, nil
	case len(live) > 1:
		return Resolution{Reason: backupsv1alpha1.ReasonDriverConflict, Message: fmt.Sprintf(
			"BackupDrivers %s all serve strategy kind %s: no driver runs the job until only one registration serves it (remove the others' registration or kind)",
			driverNames(live), strategyKind)}, nil
	}
	d := live[0]
	ours := r.Protocols
	if ours == nil {
		ours = CoreProtocolVersions
	}
	for _, v := range ours {
		if slices.Contains(d.Spec.ProtocolVersions, v) {
			return Resolution{Reason: backupsv1alpha1.ReasonBound, Driver: d, ProtocolVersion: v,
				Message: fmt.Sprintf("bound to BackupDriver %s (protocol %s)", d.Name, v)}, nil
		}
	}
	return Resolution{Reason: backupsv1alpha1.ReasonProtocolIncompatible, Message: fmt.Sprintf(
		"BackupDriver %s speaks protocol versions [%s], the platform's backup core speaks [%s]: upgrade the driver's catalog or the platform",
		d.Name, strings.Join(d.Spec.ProtocolVersions, ", "), strings.Join(ours, ", "))}, nil
}

// Get returns the registration named name and whether it is live at now
// and accepted (Accept); a missing registration is (nil, false, nil).
func (r *Resolver) Get(ctx context.Context, name string, now time.Time) (*backupsv1alpha1.BackupDriver, bool, error) {
	d := &backupsv1alpha1.BackupDriver{}
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: name}, d); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, err
	}
	if a, err := r.Accept(ctx, d); err != nil || !a.Accepted() {
		return d, false, err
	}
	ok, err := r.live(ctx, d, now)
	return d, ok, err
}

// handedOff refuses (CatalogMismatch) an accepted catalog driver a serving
// strategyKind that the handoff list gives to another catalog: the
// platform's finding (a.Catalog), never spec.catalog, decides.
func (r *Resolver) handedOff(a Acceptance, d *backupsv1alpha1.BackupDriver, strategyKind string) Acceptance {
	for _, h := range r.Handoff {
		if h.StrategyKind == strategyKind && a.Catalog != "" && a.Catalog != h.Catalog {
			return Acceptance{Reason: backupsv1alpha1.ReasonCatalogMismatch, Message: fmt.Sprintf(
				"BackupDriver %s is of catalog %s, but the platform hands strategy kind %s to catalog %s", d.Name, a.Catalog, strategyKind, h.Catalog)}
		}
	}
	return a
}

func (r *Resolver) live(ctx context.Context, d *backupsv1alpha1.BackupDriver, now time.Time) (bool, error) {
	lease := &coordinationv1.Lease{}
	key := types.NamespacedName{Namespace: d.Spec.Lease.Namespace, Name: d.Spec.Lease.Name}
	if err := r.Reader.Get(ctx, key, lease); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return Live(lease, now), nil
}

func driverNames(ds []*backupsv1alpha1.BackupDriver) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Name
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
