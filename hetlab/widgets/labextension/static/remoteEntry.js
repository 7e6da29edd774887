// hetlab-widgets: a JupyterLab extension of one plugin, written as the module-federation
// container JupyterLab loads (it needs no shared module, so no build step).
//
// After a page reload, JupyterLab restores every widget model from the running kernel.
// ipywidgets 8.1's view renderer asks the manager for its model for two seconds and, if the
// restore has finished by the time it gives up, shows "Error displaying widget: model not
// found" for good. A restore that ends while the page is busy drawing the first views makes
// the others give up when their models are already there. This plugin gives each notebook's
// manager a get_model that waits for the model as long as the restore may take, then asks
// the manager's own; and a view that still shows the error is rendered again.
(function () {
  'use strict';
  const VIEW = 'application/vnd.jupyter.widget-view+json';
  const NOT_FOUND = 'Error displaying widget: model not found';
  const WAIT_MS = 15000;   // the longest a restore is waited for
  const POLL_MS = 100;
  const RETRIES = 5;       // renders again of a view that shows NOT_FOUND, POLL_MS * 10 apart

  const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

  function waitingGetModel(manager) {
    if (!manager || manager.__hetlabWaits || typeof manager.get_model !== 'function'
        || typeof manager.has_model !== 'function') return;
    manager.__hetlabWaits = true;
    const ask = manager.get_model.bind(manager);
    manager.get_model = async function (id) {
      const until = Date.now() + WAIT_MS;
      while (!manager.has_model(id) && Date.now() < until) await sleep(POLL_MS);
      return ask(id);
    };
  }

  function retrying(renderer) {
    const render = renderer.renderModel.bind(renderer);
    renderer.renderModel = async function (model) {
      const delegate = renderer._manager;
      if (delegate && delegate.promise) delegate.promise.then(waitingGetModel);
      await render(model);
      for (let i = 0; i < RETRIES && renderer.node.textContent === NOT_FOUND; i++) {
        await sleep(POLL_MS * 10);
        renderer.node.textContent = '';
        renderer.removeClass('jupyter-widgets');
        await render(model);
      }
    };
    return renderer;
  }

  function wrap(rendermime) {
    if (!rendermime || rendermime.__hetlabWaits) return;
    rendermime.__hetlabWaits = true;
    const create = rendermime.createRenderer.bind(rendermime);
    rendermime.createRenderer = function (mimeType) {
      const renderer = create(mimeType);
      return mimeType === VIEW ? retrying(renderer) : renderer;
    };
  }

  const plugin = {
    id: 'hetlab-widgets:wait-for-models',
    description: 'A widget view waits for its model while widgets are restored from the kernel.',
    autoStart: true,
    activate(app) {
      app.docRegistry.addWidgetExtension('Notebook', {
        createNew(panel) {
          wrap(panel.content && panel.content.rendermime);
        },
      });
    },
  };

  const container = {
    init: async () => {},
    get: async () => () => ({ __esModule: true, default: plugin }),
  };
  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB['hetlab-widgets'] = container;
})();
