package application

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"cozystack.io/contracts/apis/cozystack/v1alpha1"
	"cozystack.io/platform/internal/apiserver/appkinds"
)

// SettingsFieldManager is the field manager of the release-settings
// patches: the HelmRelease's managedFields tell them from the
// application's writes (FieldManager).
const SettingsFieldManager = "cozystack-api-release-settings"

// settingsPageSize bounds the HelmReleases one list call returns, unless
// SettingsSync.PageSize says otherwise.
const settingsPageSize = 250

// releaseSettings are the fields of an application's HelmRelease that its
// kind's release settings own (contract K1, "Release settings"):
// spec.install and spec.upgrade timeout, disableWait and
// remediation.retries, from the AD's spec.release.install and .upgrade and
// its release.cozystack.io/helm-* annotations.
type releaseSettings struct {
	InstallTimeout, UpgradeTimeout         *time.Duration
	InstallDisableWait, UpgradeDisableWait bool
	InstallRetries, UpgradeRetries         *int
}

// kindSettings are what ToHelmRelease writes for kind k.
func kindSettings(k *appkinds.Kind) releaseSettings {
	hr, err := ToHelmRelease(k, &unstructured.Unstructured{Object: map[string]any{}})
	if err != nil { // an empty application has no labels to refuse
		panic(err)
	}
	return hrSettings(hr)
}

func hrSettings(hr *helmv2.HelmRelease) releaseSettings {
	var s releaseSettings
	if in := hr.Spec.Install; in != nil {
		if in.Timeout != nil {
			s.InstallTimeout = &in.Timeout.Duration
		}
		s.InstallDisableWait = in.DisableWait
		if in.Remediation != nil {
			r := in.Remediation.Retries
			s.InstallRetries = &r
		}
	}
	if up := hr.Spec.Upgrade; up != nil {
		if up.Timeout != nil {
			s.UpgradeTimeout = &up.Timeout.Duration
		}
		s.UpgradeDisableWait = up.DisableWait
		if up.Remediation != nil {
			r := up.Remediation.Retries
			s.UpgradeRetries = &r
		}
	}
	return s
}

// patch is the JSON merge patch that sets s and nothing else: a setting
// the kind leaves out is removed (null), as an application write would.
func (s releaseSettings) patch(resourceVersion string) ([]byte, error) {
	action := func(timeout *time.Duration, disableWait bool, retries *int) map[string]any {
		a := map[string]any{"timeout": nil, "disableWait": nil, "remediation": nil}
		if timeout != nil {
			a["timeout"] = timeout.String()
		}
		if disableWait {
			a["disableWait"] = true
		}
		if retries != nil {
			a["remediation"] = map[string]any{"retries": *retries}
		}
		return a
	}
	return json.Marshal(map[string]any{
		// Only over the HelmRelease just read: a write in between is
		// looked at again.
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"spec": map[string]any{
			"install": action(s.InstallTimeout, s.InstallDisableWait, s.InstallRetries),
			"upgrade": action(s.UpgradeTimeout, s.UpgradeDisableWait, s.UpgradeRetries),
		},
	})
}

// SettingsSync brings the release settings of every existing application's
// HelmRelease in step with its kind's, so that a changed
// ApplicationDefinition reaches applications no tenant writes (contract
// K1, "Release settings"). It touches only the releaseSettings fields,
// with a merge patch under SettingsFieldManager, never values, labels or
// any other field; it runs on ApplicationDefinition changes only, which
// tenants cannot make. Each kind whose settings changed (every kind, on
// the first set) is listed by its v1alpha1.LabelApplicationKind label in
// pages of settingsPageSize.
type SettingsSync struct {
	// Client lists and patches HelmReleases (cozystack-api's backend
	// client, uncached).
	Client client.Client
	// Retry is how long a failed pass waits before it is run again;
	// default 5s.
	Retry time.Duration
	// Recheck is how long after a pass that patched HelmReleases their
	// kinds are looked at once more, default 90s: longer than a request
	// (60s), so an application write already in flight with the earlier
	// settings when the kind changed is corrected too.
	Recheck time.Duration
	// PageSize is the limit of each list call; default settingsPageSize.
	PageSize int64

	mu      sync.Mutex
	pending *appkinds.Set
	wake    chan struct{}
	// synced holds the settings each kind's HelmReleases were last
	// brought to.
	synced map[string]releaseSettings
	// rechecked are the kinds the pending recheck lists again.
	rechecked []string
}

// Update hands the sync a new set of served kinds; it never blocks.
func (s *SettingsSync) Update(set *appkinds.Set) {
	s.mu.Lock()
	s.pending = set
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	wake := s.wake
	s.mu.Unlock()
	select {
	case wake <- struct{}{}:
	default:
	}
}

// Run syncs each set Update hands it, the latest first, until ctx ends.
func (s *SettingsSync) Run(ctx context.Context) {
	s.mu.Lock()
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	wake := s.wake
	s.mu.Unlock()
	retry := s.Retry
	if retry == 0 {
		retry = 5 * time.Second
	}
	recheck := s.Recheck
	if recheck == 0 {
		recheck = 90 * time.Second
	}
	var last *appkinds.Set
	var again <-chan time.Time
	for {
		var timer <-chan time.Time
		if last != nil {
			timer = time.After(retry)
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
			s.mu.Lock()
			last = s.pending
			s.mu.Unlock()
		case <-timer:
		case <-again:
			again = nil
			s.forget(s.rechecked)
			s.rechecked = nil
			s.mu.Lock()
			last = s.pending
			s.mu.Unlock()
		}
		if last == nil {
			continue
		}
		patched, err := s.sync(ctx, last)
		if err != nil {
			klog.ErrorS(err, "applying release settings to existing applications; retrying", "after", retry)
			continue
		}
		if len(patched) > 0 {
			s.rechecked, again = append(s.rechecked, patched...), time.After(recheck)
		}
		last = nil
	}
}

// forget drops what was synced for kinds, so that the next pass lists
// them again.
func (s *SettingsSync) forget(kinds []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range kinds {
		delete(s.synced, k)
	}
}

// Sync patches the HelmReleases of every served kind of set whose
// settings differ from those it last synced.
func (s *SettingsSync) Sync(ctx context.Context, set *appkinds.Set) error {
	_, err := s.sync(ctx, set)
	return err
}

// sync is Sync; patched are the kinds it patched HelmReleases of.
func (s *SettingsSync) sync(ctx context.Context, set *appkinds.Set) (patched []string, err error) {
	var errs []error
	for _, k := range set.Served() {
		want := kindSettings(k)
		s.mu.Lock()
		prev, done := s.synced[k.Kind]
		s.mu.Unlock()
		if done && equality.Semantic.DeepEqual(prev, want) {
			continue
		}
		n, err := s.syncKind(ctx, k, want)
		if err != nil {
			errs = append(errs, fmt.Errorf("kind %s: %w", k.Kind, err))
			continue
		}
		if n > 0 {
			klog.InfoS("applied the kind's release settings to existing applications", "kind", k.Kind, "helmReleases", n)
			patched = append(patched, k.Kind)
		}
		s.mu.Lock()
		if s.synced == nil {
			s.synced = map[string]releaseSettings{}
		}
		s.synced[k.Kind] = want
		s.mu.Unlock()
	}
	return patched, errors.Join(errs...)
}

// syncKind patches the HelmReleases of kind k whose settings are not want
// and returns how many it patched.
func (s *SettingsSync) syncKind(ctx context.Context, k *appkinds.Kind, want releaseSettings) (int, error) {
	patched := 0
	opts := []client.ListOption{
		client.MatchingLabels{v1alpha1.LabelApplicationKind: k.Kind, v1alpha1.LabelApplicationGroup: appkinds.Group},
		client.Limit(cmp.Or(s.PageSize, settingsPageSize)),
	}
	for cont := ""; ; {
		var list helmv2.HelmReleaseList
		if err := s.Client.List(ctx, &list, append(opts, client.Continue(cont))...); err != nil {
			return patched, err
		}
		for i := range list.Items {
			hr := &list.Items[i]
			if _, ok := k.ApplicationName(hr.Name); !ok || !hr.DeletionTimestamp.IsZero() {
				continue
			}
			done, err := s.syncOne(ctx, hr, want)
			if err != nil {
				return patched, err
			}
			if done {
				patched++
			}
		}
		if cont = list.Continue; cont == "" {
			return patched, nil
		}
	}
}

// syncOne patches hr to want unless it has the settings already; a
// conflict (a write since the list) reads it again.
func (s *SettingsSync) syncOne(ctx context.Context, hr *helmv2.HelmRelease, want releaseSettings) (bool, error) {
	for attempt := 0; ; attempt++ {
		if equality.Semantic.DeepEqual(hrSettings(hr), want) {
			return false, nil
		}
		body, err := want.patch(hr.ResourceVersion)
		if err != nil {
			return false, err
		}
		err = s.Client.Patch(ctx, hr, client.RawPatch(types.MergePatchType, body), client.FieldOwner(SettingsFieldManager))
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !apierrors.IsConflict(err) || attempt >= updateAttempts:
			return false, fmt.Errorf("HelmRelease %s/%s: %w", hr.Namespace, hr.Name, err)
		}
		fresh := &helmv2.HelmRelease{}
		if err := s.Client.Get(ctx, client.ObjectKeyFromObject(hr), fresh); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		hr = fresh
	}
}
