"""``manage.py distribute_node_tokens --pool 3 [--rotate]``: mint node tokens for the pool's
nodes that lack a working one and write them into the agents' Secret (see
``apps.health.token_distribution``). Prints node names and counts, never a token."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.clusters.backends.base import BackendError
from apps.clusters.models import ClusterKind, Node
from apps.health import token_distribution as dist


class Command(BaseCommand):
    help = "Mint node tokens where missing and write them into the agent Secret."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pool", type=int, action="append", default=[], help="pool id")
        parser.add_argument(
            "--all", action="store_true", help="every node of every Kubernetes cluster"
        )
        parser.add_argument("--rotate", action="store_true", help="replace every token")
        parser.add_argument("--overlap-minutes", type=int, default=60)
        parser.add_argument("--namespace", default=dist.NAMESPACE)
        parser.add_argument("--secret", default=dist.SECRET_NAME)
        parser.add_argument("--kubeconfig", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["pool"] and not options["all"]:
            raise CommandError("name one or more --pool ids, or --all")
        nodes = Node.objects.filter(cluster__kind=ClusterKind.KUBERNETES).order_by("name")
        if not options["all"]:
            nodes = nodes.filter(pool_id__in=options["pool"])
        if not nodes.exists():
            raise CommandError("no nodes of a Kubernetes cluster in the given pools")
        if options["overlap_minutes"] < 0:
            raise CommandError("--overlap-minutes must not be negative")
        from apps.clusters.backends.kubernetes.backend import api_client_from_environment

        api_client = api_client_from_environment(options["kubeconfig"])
        try:
            store = dist.SecretStore(
                api_client, namespace=options["namespace"], name=options["secret"]
            )
            result = dist.distribute(
                store,
                list(nodes),
                rotate=options["rotate"],
                overlap=timedelta(minutes=options["overlap_minutes"]),
            )
        except BackendError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            api_client.close()
        self.stdout.write(
            f"{store.namespace}/{store.name}: {len(result.minted)} minted "
            f"({', '.join(result.minted) or 'none'}), {len(result.kept)} kept, "
            f"{result.superseded} superseded"
        )
