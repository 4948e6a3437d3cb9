"""Loaded by every Python process started with this folder on PYTHONPATH (bench/worker_profile.py):
when WORKER_PROFILE_DIR is set, each ansible-playbook worker (one fork per host and task) runs
under cProfile and leaves its stats there as w<pid>.prof."""
import os

if os.environ.get("WORKER_PROFILE_DIR"):
    import cProfile

    from ansible.executor.process import worker

    _run = worker.WorkerProcess._run

    def _profiled_run(self):
        profile = cProfile.Profile()
        profile.enable()
        try:
            return _run(self)
        finally:
            profile.disable()
            profile.dump_stats(os.path.join(os.environ["WORKER_PROFILE_DIR"], f"w{os.getpid()}.prof"))

    worker.WorkerProcess._run = _profiled_run
