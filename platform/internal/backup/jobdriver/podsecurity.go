package jobdriver

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"cozystack.io/sdk/backup/api/v1alpha1"
	"cozystack.io/sdk/backup/driver"
)

// ServiceAccount is the ServiceAccount every pod of the Job driver runs as:
// one per tenant namespace, made by the driver (ensureServiceAccount), with
// no RoleBinding and no token mounted. A class naming any other is refused.
const ServiceAccount = "cozy-backup-job"

// restricted is the Pod Security level and version every pod template is
// checked against (k8s.io/pod-security-admission, the upstream checks).
var restricted = api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}

var evaluator = func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("pod security evaluator: %v", err))
	}
	return e
}()

// secure makes the pod template of a rendered Job (parameter field, e.g.
// "backup") one the driver may create, or returns a *driver.RunError with
// reason PodSecurityViolation naming the fields and class (the BackupClass
// name, for the message):
//   - fields the class left unset get restricted-compliant defaults
//     (runAsNonRoot, seccompProfile RuntimeDefault, no privilege
//     escalation, capabilities drop ALL, no ServiceAccount token);
//   - the pod runs as ServiceAccount; a class naming another one, asking for
//     a token (automountServiceAccountToken: true) or projecting one is
//     refused;
//   - the result must pass Pod Security "restricted" (latest), whatever the
//     namespace's own labels say.
func secure(field, class string, pod *corev1.PodTemplateSpec) error {
	s := &pod.Spec
	base := field + ".spec.template.spec"
	var bad []string
	for _, sa := range []struct{ name, value string }{{"serviceAccountName", s.ServiceAccountName}, {"serviceAccount", s.DeprecatedServiceAccount}} {
		if sa.value != "" && sa.value != ServiceAccount {
			bad = append(bad, fmt.Sprintf("%s.%s is %q (backup pods run as %s only)", base, sa.name, sa.value, ServiceAccount))
		}
	}
	if s.AutomountServiceAccountToken != nil && *s.AutomountServiceAccountToken {
		bad = append(bad, base+".automountServiceAccountToken is true (backup pods get no API token)")
	}
	for i, v := range s.Volumes {
		if v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				bad = append(bad, fmt.Sprintf("%s.volumes[%d] (%s) projects a ServiceAccount token (backup pods get no API token)", base, i, v.Name))
			}
		}
	}
	s.ServiceAccountName, s.DeprecatedServiceAccount = ServiceAccount, ""
	s.AutomountServiceAccountToken = ptr.To(false)
	defaults(s)
	if r := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &pod.ObjectMeta, s)); !r.Allowed {
		bad = append(bad, base+` fails Pod Security "restricted": `+r.ForbiddenDetail())
	}
	if len(bad) == 0 {
		return nil
	}
	return driver.Fail(v1alpha1.ReasonPodSecurityViolation,
		"the %s Job of BackupClass %s is refused: %s; the catalog that ships the class (or the cluster operator, for a class they wrote) must fix it (contract k7, \"Tenant isolation\")",
		field, class, strings.Join(bad, "; "))
}

// defaults sets, where the class left them unset, the fields Pod Security
// "restricted" requires, so a plain template (image, args) passes and one
// that asks for more is refused rather than silently changed.
func defaults(s *corev1.PodSpec) {
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	psc := s.SecurityContext
	if psc.RunAsNonRoot == nil {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	container := func(c *corev1.SecurityContext) *corev1.SecurityContext {
		if c == nil {
			c = &corev1.SecurityContext{}
		}
		if c.AllowPrivilegeEscalation == nil {
			c.AllowPrivilegeEscalation = ptr.To(false)
		}
		if c.Capabilities == nil {
			c.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
		}
		return c
	}
	for i := range s.InitContainers {
		s.InitContainers[i].SecurityContext = container(s.InitContainers[i].SecurityContext)
	}
	for i := range s.Containers {
		s.Containers[i].SecurityContext = container(s.Containers[i].SecurityContext)
	}
}
