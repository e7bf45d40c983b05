//! The CPU backend's pool as the scene uses it: a whole call run on it, with its other
//! workers kept awake through the call as [`WorkersAwake`] says.

use super::Scene;
use crate::backend::Engine;
use crate::error::{Error, Result};
use crate::workers_awake::WorkersAwake;

impl Scene {
    /// Sets how the other workers of a CPU scene's pool wait through each of its calls, a
    /// detection or an update ([`WorkersAwake`]: awake through the whole call by default on the
    /// scene's own pool, [`Scene::new_cpu`]; for at most [`WorkersAwake::SHARED`] on a pool the
    /// caller shares with it, [`Scene::new_cpu_on_pool`]; or never). The contacts do not depend
    /// on it. Errors: [`Error::InvalidInput`] on a GPU scene.
    ///
    /// ```
    /// use raycontact::{Scene, WorkersAwake};
    /// let mut scene = Scene::new_cpu(Some(2)).unwrap();
    /// assert_eq!(scene.workers_awake(), Some(WorkersAwake::WholeCall));
    /// scene.set_workers_awake(WorkersAwake::Off).unwrap();
    /// assert_eq!(scene.workers_awake(), Some(WorkersAwake::Off));
    /// ```
    pub fn set_workers_awake(&mut self, awake: WorkersAwake) -> Result<()> {
        match &mut self.engine {
            Engine::Cpu(c) => {
                c.set_workers_awake(awake);
                Ok(())
            }
            Engine::Gpu(_) => Err(Error::InvalidInput { what: "set_workers_awake needs a CPU scene".into() }),
        }
    }

    /// How the other workers of a CPU scene's pool wait through its calls
    /// ([`Scene::set_workers_awake`]); `None` for a GPU scene.
    pub fn workers_awake(&self) -> Option<WorkersAwake> {
        match &self.engine {
            Engine::Cpu(c) => Some(c.workers_awake()),
            Engine::Gpu(_) => None,
        }
    }

    /// Runs `op` with the scene, on the CPU backend's pool when the scene is on the CPU (in
    /// place on the GPU): a whole call, whose stages' own installs on the pool then run in
    /// place, wakes the pool's workers once instead of once per stage. On this project's 2-core
    /// VM a round trip to a rayon pool costs 20 µs back to back and 45–60 µs once its workers
    /// sleep, against frames of 0.2–0.3 ms on the small scenes. The pool's other workers are
    /// kept awake through the call as [`WorkersAwake`] says (`cpu_backend/awake.rs`), so that
    /// its later stages do not wait for them to wake again either. (On the web, where there is
    /// no pool and a scene is not `Send`, `op` runs here.)
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn on_cpu_pool<R: Send>(&mut self, op: impl FnOnce(&mut Self) -> R + Send) -> R {
        let pool = match &self.engine {
            Engine::Cpu(c) => Some((c.pool(), c.workers_awake().most())),
            Engine::Gpu(_) => None,
        };
        match pool {
            Some((pool, most)) => pool.install_awake(most, || op(self)),
            None => op(self),
        }
    }

    #[cfg(target_arch = "wasm32")]
    pub(crate) fn on_cpu_pool<R>(&mut self, op: impl FnOnce(&mut Self) -> R) -> R {
        op(self)
    }
}
