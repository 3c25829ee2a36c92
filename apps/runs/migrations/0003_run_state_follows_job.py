from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps

# Runs of jobs that ended before a run's state followed its job kept "running".
END_STATES = {"succeeded": "finished", "failed": "failed", "cancelled": "cancelled"}


def mark_existing_runs(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    run_model = apps.get_model("runs", "Run")
    for job_state, run_state in END_STATES.items():
        run_model.objects.filter(state="running", job__state=job_state).update(state=run_state)
    # Curves of training jobs on a simulated cluster were written by its simulator, which
    # now marks its runs (and steps aside when a job's own process reports).
    run_model.objects.filter(job__kind="training", job__pool__cluster__kind="simulated").update(
        simulated=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("jobs", "0007_job_max_runtime_s"),
        ("runs", "0002_checkpoint_request"),
    ]

    operations = [
        migrations.AlterField(
            model_name="run",
            name="state",
            field=models.CharField(
                choices=[
                    ("running", "Running"),
                    ("finished", "Finished"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                ],
                default="running",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="run",
            name="simulated",
            field=models.BooleanField(
                default=False,
                help_text="Its curves are the simulated cluster's made-up ones (its jobs run no "
                "code); they are dropped when the job's own process first reports.",
            ),
        ),
        migrations.RunPython(mark_existing_runs, migrations.RunPython.noop),
    ]
