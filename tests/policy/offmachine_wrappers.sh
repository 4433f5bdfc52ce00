#!/bin/sh
# offmachine_wrappers.sh — off-machine command lines are refused through
# wrappers too, at the exec of the real program. Stand-ins named kubectl,
# terraform, aws, gh, psql, docker, npm, crontab, systemctl and ssh (they
# only record that they ran) come first in PATH, so nothing here can reach
# a real cluster, cloud or service whatever the outcome. Each line runs as
# `txguard -- sh -c LINE`; the stand-in must not run and the report must
# name the rule.
. "$(dirname "$0")/../lib/common.sh"
tg_tmpdir
BIN="$TG_TMP/bin"
WS="$TG_TMP/ws"
RAN="$TG_TMP/ran"
mkdir -p "$BIN" "$WS"
for p in kubectl terraform aws gh psql docker npm crontab systemctl ssh helm redis-cli; do
	printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$p" "$RAN" > "$BIN/$p"
	chmod +x "$BIN/$p"
done
export PATH="$BIN:$PATH"

n=0
check() { # RULE LINE
	rule=$1 line=$2
	rm -f "$RAN" "$TG_TMP/report.json"
	# (find -exec exits 0 whatever its command did: the outcome is what
	# counts, not the code.)
	(cd "$WS" && "$TXGUARD" -q -w "$WS" --report "$TG_TMP/report.json" -- sh -c "$line") \
		>/dev/null 2>&1 || true
	[ ! -e "$RAN" ] || fail "'$line' ran the stand-in: $(cat "$RAN")"
	grep -q "\"rule\":\"$rule\"" "$TG_TMP/report.json" ||
		fail "'$line': no decision by rule $rule in the report"
	n=$((n + 1))
}

check k8s-delete 'env kubectl delete namespace prod'
check k8s-delete 'bash -c "kubectl -n prod delete deploy api"'
check k8s-delete 'echo prod | xargs kubectl delete ns'
check k8s-delete 'find . -maxdepth 0 -exec kubectl delete ns prod \;'
check helm-uninstall 'nice -n 5 helm uninstall web'
check terraform-destroy 'timeout 10 terraform destroy -auto-approve'
check terraform-auto-approve 'nohup terraform apply -auto-approve >/dev/null'
check aws-delete 'env -i PATH="$PATH" aws s3 rm s3://bucket --recursive'
check aws-delete 'sh -c "sh -c \"aws ec2 terminate-instances --instance-ids i-1\""'
check forge-delete 'command gh repo delete owner/repo --yes'
check forge-api-delete 'gh api -X DELETE repos/owner/repo'
check sql-destructive 'psql -c "DROP DATABASE prod"'
check redis-flush 'redis-cli FLUSHALL'
check container-prune 'docker system prune -af'
check publish-package 'printf "#!/bin/sh\nnpm publish\n" > rel.sh && chmod +x rel.sh && ./rel.sh'
check crontab-change 'crontab -r'
check systemctl-system-change 'systemctl restart nginx'
check crontab-change 'python3 -c "import subprocess; subprocess.run([\"crontab\", \"-r\"])"'

# The same tools' everyday use still runs.
rm -f "$RAN"
(cd "$WS" && "$TXGUARD" -q -w "$WS" -- sh -c 'kubectl get pods; env terraform plan; aws s3 ls;
	gh pr view 1; psql -c "SELECT 1"; npm pack; crontab -l; systemctl status nginx') ||
	fail "benign lines failed"
assert_eq "benign stand-ins that ran" 8 "$(wc -l < "$RAN")"
echo "ok: $n wrapped off-machine lines refused, 8 benign ones ran"
