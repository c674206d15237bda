package podrun_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"cozystack.io/tools/internal/podrun"
)

func TestArgs(t *testing.T) {
	fieldRef := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	env := []corev1.EnvVar{fieldRef("POD_NAMESPACE", "metadata.namespace"), fieldRef("POD_NAME", "metadata.name"), {Name: "MODE", Value: "fast"}}
	for _, tc := range []struct {
		name      string
		ctr       corev1.Container
		want      []string
		moved     []string // flags moved to loopback
		errSubstr string
	}{
		{name: "downward API and literals",
			ctr:  corev1.Container{Env: env, Args: []string{"--namespace=$(POD_NAMESPACE)", "--identity=$(POD_NAME)", "--mode=$(MODE)-x"}},
			want: []string{"--namespace=cozy-x", "--identity=x-0", "--mode=fast-x"}},
		{name: "command after the binary comes first",
			ctr:  corev1.Container{Command: []string{"/driver", "run"}, Args: []string{"--v=2"}},
			want: []string{"run", "--v=2"}},
		{name: "served ports move to loopback, 0 stays",
			ctr:   corev1.Container{Args: []string{"--health-probe-bind-address=:8081", "--metrics-bind-address=0"}},
			want:  []string{"--health-probe-bind-address=127.0.0.1:*", "--metrics-bind-address=0"},
			moved: []string{"--health-probe-bind-address"}},
		{name: "a variable from a Secret cannot be expanded",
			ctr: corev1.Container{Name: "driver", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "t"}}}},
				Args: []string{"--token=$(TOKEN)"}},
			errSubstr: `container driver: argument "--token=" refers to $(TOKEN)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, binds, err := podrun.Args(tc.ctr, "cozy-x", "x-0")
			if tc.errSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
					t.Fatalf("error %v, want one containing %q", err, tc.errSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range tc.want {
				if p, ok := strings.CutSuffix(w, "*"); ok && i < len(got) && strings.HasPrefix(got[i], p) {
					tc.want[i] = got[i]
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			for _, f := range tc.moved {
				if !strings.HasPrefix(binds[f], "127.0.0.1:") || binds[f] == "127.0.0.1:8081" {
					t.Errorf("%s moved to %q, want a free loopback port", f, binds[f])
				}
			}
			if len(binds) != len(tc.moved) {
				t.Errorf("binds %v, want only %v", binds, tc.moved)
			}
		})
	}
}
